package httpserve

import (
	"context"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/coffer/coffer"
)

// Access log modes.
const (
	AccessLogOn     = "on"     // errors and writes always; successful reads up to ReadsPerSecond
	AccessLogErrors = "errors" // only answers with status 400 and above
	AccessLogOff    = "off"
)

// AccessLogConfig says which requests get an access log line: an INFO record
// "request" with request_id, method, path, status, bytes and duration_ms (none when
// the log level is above info).
type AccessLogConfig struct {
	Mode string // AccessLogOn, AccessLogErrors or AccessLogOff
	// ReadsPerSecond bounds, in mode on, the lines of successful (status < 400) GET
	// and HEAD requests: at most this many a second; the others are counted, and the
	// next such line says how many were left out before it ("skipped"). Errors and
	// writes are always logged. 0: every request.
	ReadsPerSecond int
}

// DefaultAccessLogConfig is mode on with at most 100 successful reads a second.
func DefaultAccessLogConfig() AccessLogConfig {
	return AccessLogConfig{Mode: AccessLogOn, ReadsPerSecond: 100}
}

// Validate checks c.
func (c AccessLogConfig) Validate() error {
	switch c.Mode {
	case AccessLogOn, AccessLogErrors, AccessLogOff:
	default:
		return coffer.Errorf(coffer.EINVALID, "access log mode must be on, errors or off, not %q", c.Mode)
	}
	if c.ReadsPerSecond < 0 {
		return coffer.Errorf(coffer.EINVALID, "access log reads per second must not be negative")
	}
	return nil
}

// AccessLog writes the access log lines. Its counters are shared by all requests:
// a request that is not logged costs a few atomic operations and no allocation.
type AccessLog struct {
	log     *slog.Logger
	mode    string
	perSec  int64
	sec     atomic.Int64 // the second (Unix) that used counts lines in
	used    atomic.Int64
	skipped atomic.Int64 // successful reads left out since the last such line
}

// NewAccessLog returns the access log for cfg, writing to log.
func NewAccessLog(cfg AccessLogConfig, log *slog.Logger) *AccessLog {
	return &AccessLog{log: log, mode: cfg.Mode, perSec: int64(cfg.ReadsPerSecond)}
}

// Request logs a finished request, if the configuration says so.
func (a *AccessLog) Request(r *http.Request, id string, status int, bytes int64, start time.Time, d time.Duration) {
	a.Line(r.Method, r.URL.Path, id, status, bytes, start, d)
}

// Wants reports whether the mode logs requests answered with status.
func (a *AccessLog) Wants(status int) bool {
	return a.mode != AccessLogOff && (a.mode != AccessLogErrors || status >= 400)
}

// Line logs a finished request given its method and path, if the configuration says so.
func (a *AccessLog) Line(method, path, id string, status int, bytes int64, start time.Time, d time.Duration) {
	if !a.Wants(status) {
		return
	}
	if !a.log.Enabled(context.Background(), slog.LevelInfo) {
		return
	}
	var skipped int64
	if a.perSec > 0 && status < 400 && (method == http.MethodGet || method == http.MethodHead) {
		var ok bool
		if ok, skipped = a.takeRead(start.Unix()); !ok {
			return
		}
	}
	ms := slog.Float64("duration_ms", float64(d.Microseconds())/1000)
	if skipped == 0 {
		a.log.LogAttrs(context.Background(), slog.LevelInfo, "request", slog.String("request_id", id),
			slog.String("method", method), slog.String("path", path), slog.Int("status", status),
			slog.Int64("bytes", bytes), ms)
		return
	}
	a.log.LogAttrs(context.Background(), slog.LevelInfo, "request", slog.String("request_id", id),
		slog.String("method", method), slog.String("path", path), slog.Int("status", status),
		slog.Int64("bytes", bytes), ms, slog.Int64("skipped", skipped))
}

// takeRead reports whether a successful read that started in second sec may be
// logged, and how many were skipped before it.
func (a *AccessLog) takeRead(sec int64) (ok bool, skipped int64) {
	if cur := a.sec.Load(); cur < sec && a.sec.CompareAndSwap(cur, sec) {
		a.used.Store(0) // lines counted between the swap and this store go to the new second: a few more, never fewer
	}
	if a.used.Add(1) > a.perSec {
		a.skipped.Add(1)
		return false, 0
	}
	return true, a.skipped.Swap(0)
}
