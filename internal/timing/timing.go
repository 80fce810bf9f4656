// Package timing records where a request's time went, for the Server-Timing response
// header: the HTTP layer puts a Recorder in the request context, and any layer below
// adds the phases it ran (auth, meta, rules, blob-open, transform) and what its caches
// did. Every function is a no-op on a context without a Recorder, so layers need not
// care whether anyone is listening.
package timing

import (
	"context"
	"strconv"
	"time"
)

// maxEntries bounds a recorder; more entries are dropped (a request runs a handful).
const maxEntries = 12

type entry struct {
	name, desc string
	dur        time.Duration
	timed      bool
}

// Recorder collects the phases of one request. It is used by one goroutine at a time
// (the request's), so it has no lock.
type Recorder struct {
	n       int
	entries [maxEntries]entry
}

type ctxKey struct{}

// NewContext returns ctx carrying r.
func NewContext(ctx context.Context, r *Recorder) context.Context {
	return context.WithValue(ctx, ctxKey{}, r)
}

// IsKey reports whether key is the context key of a Recorder, for a context type that
// carries one in its own Value method instead of through NewContext.
func IsKey(key any) bool {
	_, ok := key.(ctxKey)
	return ok
}

// FromContext returns the recorder of ctx, nil if none.
func FromContext(ctx context.Context) *Recorder {
	r, _ := ctx.Value(ctxKey{}).(*Recorder)
	return r
}

// Add records a phase that took d; desc may be "".
func (r *Recorder) Add(name string, d time.Duration, desc string) {
	r.add(entry{name: name, desc: desc, dur: d, timed: true})
}

// Note records an event without a duration, such as a cache hit.
func (r *Recorder) Note(name, desc string) { r.add(entry{name: name, desc: desc}) }

func (r *Recorder) add(e entry) {
	if r == nil || r.n == maxEntries {
		return
	}
	r.entries[r.n] = e
	r.n++
}

// Since records the phase name as having run from start until now.
func Since(ctx context.Context, name string, start time.Time) {
	FromContext(ctx).Add(name, time.Since(start), "")
}

// Note records an event on the recorder of ctx.
func Note(ctx context.Context, name, desc string) { FromContext(ctx).Note(name, desc) }

// Header returns the Server-Timing header value, e.g.
// `auth;dur=0.012, meta;dur=0.004, meta-cache;desc="hit"`; "" when empty.
func (r *Recorder) Header() string {
	if r == nil || r.n == 0 {
		return ""
	}
	return string(r.AppendHeader(make([]byte, 0, 256))) // on the stack: one allocation, for the string
}

// AppendHeader appends the Server-Timing header value to b (nothing when empty).
func (r *Recorder) AppendHeader(b []byte) []byte {
	if r == nil {
		return b
	}
	for i, e := range r.entries[:r.n] {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = append(b, e.name...)
		if e.timed {
			b = append(b, ";dur="...)
			b = appendMillis(b, e.dur.Microseconds())
		}
		if e.desc != "" {
			b = append(append(append(b, `;desc="`...), e.desc...), '"')
		}
	}
	return b
}

// appendMillis appends us microseconds as milliseconds in decimal, without trailing
// zeros: what strconv.AppendFloat(b, float64(us)/1000, 'f', -1, 64) writes for any
// duration of less than 31 years, at a fraction of its cost (a shortest float
// formatting for each of a response's entries was 1% of a cached GET's CPU).
func appendMillis(b []byte, us int64) []byte {
	if us < 0 {
		b = append(b, '-')
		us = -us
	}
	b = strconv.AppendInt(b, us/1000, 10)
	frac := us % 1000
	if frac == 0 {
		return b
	}
	digits := [3]byte{byte('0' + frac/100), byte('0' + frac/10%10), byte('0' + frac%10)}
	n := 3
	for digits[n-1] == '0' {
		n--
	}
	return append(append(b, '.'), digits[:n]...)
}
