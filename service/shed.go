package service

import (
	"log/slog"
	"sync"
	"time"
)

// shedLogEvery is how often at most a refused transformation is logged.
const shedLogEvery = 10 * time.Second

// shedLog reports transformations refused because the image queue is full
// (imaging.ErrBusy, a 503 with Retry-After). That is load shedding working as
// designed, not a failure: one WARN at most every shedLogEvery, counting the refusals
// it did not log since the previous one, rather than an ERROR per request.
type shedLog struct {
	mu         sync.Mutex
	last       time.Time // of the last line; zero: none yet
	suppressed int
	now        func() time.Time
	log        *slog.Logger
}

// shedRefused records a transformation the image pool refused.
func (s *Service) shedRefused() {
	queue := -1 // unknown
	if s.images != nil && s.images.Pool() != nil {
		queue = s.images.Pool().QueueLen()
	}
	s.shed.refused(queue)
}

func (l *shedLog) refused(queue int) {
	l.mu.Lock()
	now := l.now()
	if !l.last.IsZero() && now.Sub(l.last) < shedLogEvery {
		l.suppressed++
		l.mu.Unlock()
		return
	}
	n := l.suppressed
	l.last, l.suppressed = now, 0
	l.mu.Unlock()
	l.log.Warn("image queue full: transformations refused with 503 and Retry-After (see --image-workers, --image-queue)",
		"queue", queue, "refused_since_last_line", n+1)
}
