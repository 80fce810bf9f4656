package service

import (
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/imaging"
)

// quarantine keeps images that crash the image worker away from it. Each crash adds
// 1/InFlight to the score of every source that was being transformed. The source
// that killed the worker was surely among them, and an image that is alone in the
// worker when it dies scores a full point. A source that reaches quarantineScore
// within quarantineWindow, with at least one of those crashes alone, is not
// transformed again for quarantineFor: its transformations answer 415, like a damaged
// image, and no longer take down the transformations of other images running beside
// it. Variants already cached are still served.
//
// The crash alone is what keeps one user from quarantining another's image: shared
// crashes alone would let anyone who can upload a crashing image and read a victim's
// image request both at once until the victim had its points. A crash that happens
// while the victim is alone in the worker is the victim's own doing. A crashing image
// that is only ever transformed beside others is not quarantined; the worker's restart
// backoff bounds what it costs.
type quarantine struct {
	mu  sync.Mutex
	m   map[string]*suspect // by source ETag (a content hash: a replaced file starts clean)
	now func() time.Time
	log *slog.Logger
}

type suspect struct {
	score float64
	alone bool      // a crash in the window happened with this source alone in the worker
	first time.Time // of the current window
	until time.Time // quarantined until then; zero if not
}

const (
	quarantineScore  = 2
	quarantineWindow = time.Hour
	quarantineFor    = 24 * time.Hour
	quarantineMax    = 10_000 // sources tracked; beyond, the oldest windows go
)

func newQuarantine(now func() time.Time, log *slog.Logger) *quarantine {
	return &quarantine{m: make(map[string]*suspect), now: now, log: log}
}

// check returns EUNSUPPORTED if the source with this ETag is quarantined.
func (q *quarantine) check(etag string) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	s := q.m[etag]
	if s == nil || s.until.IsZero() {
		return nil
	}
	if q.now().After(s.until) {
		delete(q.m, etag)
		return nil
	}
	return coffer.Errorf(coffer.EUNSUPPORTED, "this image made the image worker crash; it is not transformed (the original can still be downloaded)")
}

// record notes the outcome of a transformation of the source with this ETag: a
// crash of the worker raises the source's score.
func (q *quarantine) record(etag string, err error) {
	var crash *imaging.CrashError
	if !errors.As(err, &crash) {
		return
	}
	now := q.now()
	q.mu.Lock()
	defer q.mu.Unlock()
	s := q.m[etag]
	if s == nil || (s.until.IsZero() && now.Sub(s.first) > quarantineWindow) {
		if s == nil && len(q.m) >= quarantineMax {
			q.evict(now)
		}
		s = &suspect{first: now}
		q.m[etag] = s
	}
	s.score += 1 / float64(max(crash.InFlight, 1))
	s.alone = s.alone || crash.InFlight <= 1
	if s.until.IsZero() && s.alone && s.score >= quarantineScore {
		s.until = now.Add(quarantineFor)
		q.log.Warn("image quarantined: it crashed the image worker", "etag", etag, "score", s.score, "until", s.until)
	}
}

// evict makes room: expired entries first, else the oldest suspect that is not
// quarantined, else the oldest entry. Called with q.mu held.
func (q *quarantine) evict(now time.Time) {
	var oldest, oldestFree string
	var oldestAt, oldestFreeAt time.Time
	for k, s := range q.m {
		if (!s.until.IsZero() && now.After(s.until)) || (s.until.IsZero() && now.Sub(s.first) > quarantineWindow) {
			delete(q.m, k)
			continue
		}
		if oldest == "" || s.first.Before(oldestAt) {
			oldest, oldestAt = k, s.first
		}
		if s.until.IsZero() && (oldestFree == "" || s.first.Before(oldestFreeAt)) {
			oldestFree, oldestFreeAt = k, s.first
		}
	}
	if len(q.m) < quarantineMax {
		return
	}
	if oldestFree != "" {
		delete(q.m, oldestFree)
	} else {
		delete(q.m, oldest)
	}
}
