package bench

import (
	"fmt"
	"io"
	"time"
)

// progress writes a live one-line status to a terminal, rewriting it on each tick.
// A nil writer makes it silent.
type progress struct {
	w     io.Writer
	label string
	total time.Duration
	reqs  int64
	errs  int64
	shown bool
}

func newProgress(w io.Writer, label string, total time.Duration) *progress {
	return &progress{w: w, label: label, total: total}
}

// update shows the interval p, elapsed time and running totals.
func (pr *progress) update(p Point, elapsed time.Duration) {
	pr.reqs += p.Requests
	pr.errs += p.Errors
	if pr.w == nil {
		return
	}
	pr.shown = true
	fmt.Fprintf(pr.w, "\r\x1b[K%s  %s/%s  workers %d  %.0f req/s  %s/s  p50 %s  p99 %s  requests %d  errors %d",
		pr.label, elapsed.Round(time.Second), pr.total, p.Workers, p.RPS, fmtBytes(p.BPS),
		fmtMs(p.P50Ms), fmtMs(p.P99Ms), pr.reqs, pr.errs)
}

// finish ends the line.
func (pr *progress) finish() {
	if pr.w != nil && pr.shown {
		fmt.Fprintln(pr.w)
	}
}

// fmtBytes formats a byte count in decimal units (kB, MB, GB).
func fmtBytes(b float64) string {
	switch {
	case b >= 1e9:
		return fmt.Sprintf("%.2f GB", b/1e9)
	case b >= 1e6:
		return fmt.Sprintf("%.1f MB", b/1e6)
	case b >= 1e3:
		return fmt.Sprintf("%.1f kB", b/1e3)
	}
	return fmt.Sprintf("%.0f B", b)
}

// fmtMs formats milliseconds with a unit that keeps three significant digits.
func fmtMs(ms float64) string {
	switch {
	case ms >= 1000:
		return fmt.Sprintf("%.2fs", ms/1000)
	case ms >= 10:
		return fmt.Sprintf("%.0fms", ms)
	case ms >= 1:
		return fmt.Sprintf("%.2fms", ms)
	}
	return fmt.Sprintf("%.0fµs", ms*1000)
}
