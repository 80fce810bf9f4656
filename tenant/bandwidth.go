package tenant

import (
	"context"
	"io"
	"sync/atomic"
	"time"
)

// Clock is the time a Bandwidth paces by: the system's (SystemClock), or a test's.
type Clock interface {
	Now() time.Time
	// Sleep waits d or until ctx is done, returning ctx.Err() then.
	Sleep(ctx context.Context, d time.Duration) error
}

// SystemClock is the real clock.
type SystemClock struct{}

// Now returns time.Now().
func (SystemClock) Now() time.Time { return time.Now() }

// Sleep waits d on a timer, or until ctx is done.
func (SystemClock) Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Bandwidth paces one tenant's downloads to a rate in bytes per second, shared by
// all its responses, with bursts of one second's worth. Like the request buckets
// its state is one atomic int64: a reservation is a compare-and-swap, and the
// waiting happens after it, outside any lock. Safe for concurrent use; a nil
// *Bandwidth does not pace.
type Bandwidth struct {
	perSecond int64
	tolerance int64 // ns: the burst, one second
	chunk     int   // the most a paced Write sends per wait
	clock     Clock
	tat       atomic.Int64 // Unix ns at which every reservation so far is paid for
}

// NewBandwidth returns a pacer of bytesPerSecond (nil if it is 0: no limit); a nil
// clock is the system's.
func NewBandwidth(bytesPerSecond int64, clock Clock) *Bandwidth {
	if bytesPerSecond <= 0 {
		return nil
	}
	if clock == nil {
		clock = SystemClock{}
	}
	// A tenth of a second per chunk, between 1 KiB and 64 KiB: smooth pacing
	// without a wait per small write.
	chunk := int(min(max(bytesPerSecond/10, 1<<10), 64<<10))
	return &Bandwidth{perSecond: bytesPerSecond, tolerance: int64(time.Second), chunk: chunk, clock: clock}
}

// cost returns how long n bytes take at the rate, in ns (in floating point: n times
// 10^9 overflows an int64 past 9 GB).
func (b *Bandwidth) cost(n int) int64 {
	return int64(float64(n) * float64(time.Second) / float64(b.perSecond))
}

// reserve books n bytes and returns how long to wait before sending them.
func (b *Bandwidth) reserve(n int) time.Duration {
	now := b.clock.Now().UnixNano()
	for {
		old := b.tat.Load()
		next := max(old, now) + b.cost(n)
		if b.tat.CompareAndSwap(old, next) {
			return time.Duration(max(next-b.tolerance-now, 0))
		}
	}
}

// Wait returns once n more bytes may be sent, or ctx.Err() if ctx ends first (the
// bytes stay booked: a cancelled download does not give its share back).
func (b *Bandwidth) Wait(ctx context.Context, n int) error {
	if b == nil || n <= 0 {
		return nil
	}
	if d := b.reserve(n); d > 0 {
		return b.clock.Sleep(ctx, d)
	}
	return nil
}

// Writer returns w paced by b: each Write goes out in chunks of at most a tenth of
// a second's worth, each after its Wait, so nothing is held beyond the caller's
// own buffer. Pacing goes through Write: a response paced this way does not use
// sendfile (the wrapper hides w's ReadFrom on purpose). A nil b returns w.
func (b *Bandwidth) Writer(ctx context.Context, w io.Writer) io.Writer {
	if b == nil {
		return w
	}
	return &pacedWriter{ctx: ctx, w: w, b: b}
}

// pacedWriter is what Writer returns.
type pacedWriter struct {
	ctx context.Context
	w   io.Writer
	b   *Bandwidth
}

// Write sends p in chunks, waiting for each.
func (p *pacedWriter) Write(buf []byte) (int, error) {
	written := 0
	for len(buf) > 0 {
		n := min(len(buf), p.b.chunk)
		if err := p.b.Wait(p.ctx, n); err != nil {
			return written, err
		}
		m, err := p.w.Write(buf[:n])
		written += m
		if err != nil {
			return written, err
		}
		buf = buf[n:]
	}
	return written, nil
}
