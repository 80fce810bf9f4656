package edge

import (
	"sync"
	"time"
)

// breakers are the circuit breakers of origins, by origin ID. Only origins that
// are failing have one: a breaker that closes again is dropped, so the map does
// not grow with every origin ever seen.
type breakers struct {
	mu        sync.Mutex
	m         map[string]*breaker
	failures  int
	base, max time.Duration
}

// breaker counts an origin's consecutive failures. Open: requests fail fast
// until openUntil; then one probe goes through (half-open): its success closes
// the breaker, its failure opens it again for twice as long (capped).
type breaker struct {
	fails     int
	openUntil time.Time
	cooldown  time.Duration
	probing   bool
}

// allow says whether a fetch from origin id may go out now; probe is true when
// it is the half-open probe (the caller must report its outcome).
func (b *breakers) allow(id string, now time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	br := b.m[id]
	if br == nil || br.fails < b.failures {
		return true
	}
	if now.Before(br.openUntil) || br.probing {
		return false
	}
	br.probing = true
	return true
}

// success records a fetch that worked: the breaker closes.
func (b *breakers) success(id string) {
	b.mu.Lock()
	delete(b.m, id)
	b.mu.Unlock()
}

// failure records a failed fetch and reports whether it opened the breaker.
func (b *breakers) failure(id string, now time.Time) (opened bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	br := b.m[id]
	if br == nil {
		br = &breaker{}
		b.m[id] = br
	}
	br.fails++
	if br.fails < b.failures {
		return false
	}
	switch {
	case br.cooldown == 0:
		br.cooldown = b.base
	case br.probing:
		br.cooldown = min(2*br.cooldown, b.max)
	default:
		if now.Before(br.openUntil) {
			return false // a fetch that started before the breaker opened
		}
	}
	br.probing = false
	br.openUntil = now.Add(br.cooldown)
	return true
}
