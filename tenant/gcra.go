package tenant

import (
	"math"
	"sync/atomic"
	"time"
)

// Decision is the outcome of a rate check, and what the Retry-After and RateLimit-*
// headers say (SetHeaders, AppendHeaders).
type Decision struct {
	OK         bool
	Limit      int           // requests allowed at once (the burst)
	Remaining  int           // requests still allowed at once, after this one
	Reset      time.Duration // until the bucket is full again
	RetryAfter time.Duration // when !OK: until one request is allowed
}

// rate is a token bucket in GCRA terms (the generic cell rate algorithm): one
// request costs interval nanoseconds, and a cell may run up to tolerance ahead of
// the clock. The whole state of a bucket is one int64, so a check is one atomic
// compare-and-swap, with no lock.
type rate struct {
	interval  int64 // ns per request
	tolerance int64 // burst × interval
	burst     int
}

// maxTolerance bounds burst × interval (very low rates with large bursts), so that
// no sum of times overflows an int64 before the year 2200.
const maxTolerance = int64(1) << 60

// newRate returns the bucket of perSecond requests with bursts of burst (0: one
// second's worth, at least 1). perSecond must be > 0; a rate so low that a whole
// burst would take more than 2^60 ns (36 years) is raised to that.
func newRate(perSecond float64, burst int) rate {
	if burst <= 0 {
		burst = max(1, int(math.Ceil(perSecond)))
	}
	interval := int64(math.Min(float64(time.Second)/perSecond, float64(maxTolerance/int64(burst))))
	interval = max(interval, 1)
	return rate{interval: interval, tolerance: interval * int64(burst), burst: burst}
}

// cell is the state of one bucket: its theoretical arrival time, the instant (Unix
// ns) at which the bucket would be full. A zero cell is a full bucket.
type cell struct {
	tat atomic.Int64
}

// allow takes one request from c at now (Unix ns) if the bucket has one.
func (c *cell) allow(r rate, now int64) Decision {
	for {
		old := c.tat.Load()
		tat := max(old, now)
		next := tat + r.interval
		if allowAt := next - r.tolerance; now < allowAt {
			return Decision{Limit: r.burst, Reset: time.Duration(tat - now), RetryAfter: time.Duration(allowAt - now)}
		}
		if c.tat.CompareAndSwap(old, next) {
			return Decision{
				OK: true, Limit: r.burst, Remaining: int((r.tolerance - (next - now)) / r.interval),
				Reset: time.Duration(next - now),
			}
		}
	}
}

// idle reports whether c is full at now: forgetting it loses nothing, since a
// fresh cell is full too.
func (c *cell) idle(now int64) bool { return c.tat.Load() <= now }
