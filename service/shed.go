package service

import (
	"log/slog"
	"sync"
	"time"
)

// warnEvery is how often at most a warnLimit writes a line.
const warnEvery = 10 * time.Second

// warnLimit reports refusals that are the service working as designed, not failures:
// transformations refused because the image queue is full (imaging.ErrBusy, a 503
// with Retry-After) and uploads refused by the tenant's storage quota (EQUOTA, 507).
// One WARN at most every warnEvery, counting the refusals it did not log since the
// previous one, rather than an ERROR per request. A Service is one tenant's, so each
// tenant has its own lines.
type warnLimit struct {
	msg        string
	mu         sync.Mutex
	last       time.Time // of the last line; zero: none yet
	suppressed int
	now        func() time.Time
	log        *slog.Logger
}

func newWarnLimit(msg string, now func() time.Time, log *slog.Logger) *warnLimit {
	return &warnLimit{msg: msg, now: now, log: log}
}

// refused records one refusal, logged with attrs if a line is due.
func (l *warnLimit) refused(attrs ...any) {
	l.mu.Lock()
	now := l.now()
	if !l.last.IsZero() && now.Sub(l.last) < warnEvery {
		l.suppressed++
		l.mu.Unlock()
		return
	}
	n := l.suppressed
	l.last, l.suppressed = now, 0
	l.mu.Unlock()
	l.log.Warn(l.msg, append(attrs, "refused_since_last_line", n+1)...)
}

// shedRefused records a transformation the image pool refused.
func (s *Service) shedRefused() {
	queue := -1 // unknown
	if s.images != nil && s.images.Pool() != nil {
		queue = s.images.Pool().QueueLen()
	}
	s.shed.refused("queue", queue)
}
