package site

import (
	"io"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/coffer/coffer/site/audit"
)

// auditRecord is the audit log's record.
type auditRecord = audit.Record

// Stats are a site's counters since the handler started, for metrics.
type Stats struct {
	Requests    atomic.Int64
	Bytes       atomic.Int64 // body bytes sent
	Hits        atomic.Int64 // X-Cache HIT
	Misses      atomic.Int64
	Stale       atomic.Int64
	Revalidated atomic.Int64
	Errors      atomic.Int64 // answers with status >= 500
}

// Stats returns the counters of scope ("<tenant>/<site id>"), made on first use;
// they outlive recompiles of the site.
func (h *Handler) Stats(scope string) *Stats {
	if s, ok := h.stats.Load(scope); ok {
		return s.(*Stats)
	}
	s, _ := h.stats.LoadOrStore(scope, new(Stats))
	return s.(*Stats)
}

// RangeStats calls f for every scope's counters until f returns false.
func (h *Handler) RangeStats(f func(scope string, s *Stats) bool) {
	h.stats.Range(func(k, v any) bool { return f(k.(string), v.(*Stats)) })
}

// siteStats returns the counters of c, remembered in c after the first lookup.
func (h *Handler) siteStats(c *Compiled) *Stats {
	if s := c.stats.Load(); s != nil {
		return s
	}
	s := h.Stats(c.Scope)
	c.stats.Store(s)
	return s
}

// outcome is what an answer was, for the stats and the audit log.
type outcome struct {
	method, host, path, target string
	status                     int
	bytes                      int64
	cache                      CacheStatus
}

// record counts the answer of x in the site's stats and gives the audit log its
// record.
func (h *Handler) record(x *exchange, start time.Time) {
	o := outcome{method: x.r.Method, host: x.req.Host, path: x.path, target: x.target,
		status: x.w.status, bytes: x.w.bytes, cache: x.cache}
	if o.host == "" {
		o.host = x.r.Host
	}
	if o.path == "" {
		o.path = x.r.URL.Path
		if len(o.path) > MaxPathLen {
			o.path = o.path[:MaxPathLen]
		}
	}
	h.count(&x.req, &o, start)
}

// count counts the answer o to req in the site's stats and gives the audit log
// its record.
func (h *Handler) count(req *Request, o *outcome, start time.Time) {
	c := req.Site
	s := h.siteStats(c)
	s.Requests.Add(1)
	s.Bytes.Add(o.bytes)
	switch o.cache {
	case CacheHit:
		s.Hits.Add(1)
	case CacheMiss:
		s.Misses.Add(1)
	case CacheStale:
		s.Stale.Add(1)
	case CacheRevalidated:
		s.Revalidated.Add(1)
	}
	if o.status >= 500 {
		s.Errors.Add(1)
	}
	if h.cfg.Audit == nil || !c.audit {
		return
	}
	h.audit(req, o, start)
}

// audit fills a pooled record and hands it to the audit log.
func (h *Handler) audit(req *Request, o *outcome, start time.Time) {
	rec := h.records.Get().(*auditRecord)
	now := h.cfg.Now()
	*rec = auditRecord{
		Time: now, Tenant: req.Tenant, Site: req.Site.Site.ID, Host: o.host, Method: o.method,
		Path: o.path, Target: o.target, Status: o.status, Bytes: o.bytes,
		Duration: float64(now.Sub(start).Microseconds()) / 1000, Cache: string(o.cache),
		Client: req.Client, UserID: req.UserID, RequestID: req.RequestID,
	}
	h.cfg.Audit(rec)
	*rec = auditRecord{}
	h.records.Put(rec)
}

// countingWriter counts the status and body bytes of an answer.
type countingWriter struct {
	http.ResponseWriter
	status      int
	bytes       int64
	wroteHeader bool
}

// reset points cw at w with nothing written.
func (cw *countingWriter) reset(w http.ResponseWriter) {
	*cw = countingWriter{ResponseWriter: w, status: http.StatusOK}
}

// WriteHeader records the first final status.
func (cw *countingWriter) WriteHeader(code int) {
	if !cw.wroteHeader && code >= 200 {
		cw.status, cw.wroteHeader = code, true
	}
	cw.ResponseWriter.WriteHeader(code)
}

// Write counts body bytes.
func (cw *countingWriter) Write(b []byte) (int, error) {
	cw.wroteHeader = true
	n, err := cw.ResponseWriter.Write(b)
	cw.bytes += int64(n)
	return n, err
}

// ReadFrom keeps the underlying writer's ReadFrom (sendfile of an *os.File).
func (cw *countingWriter) ReadFrom(r io.Reader) (int64, error) {
	cw.wroteHeader = true
	var n int64
	var err error
	if rf, ok := cw.ResponseWriter.(io.ReaderFrom); ok {
		n, err = rf.ReadFrom(r)
	} else {
		n, err = io.Copy(struct{ io.Writer }{cw.ResponseWriter}, r)
	}
	cw.bytes += n
	return n, err
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (cw *countingWriter) Unwrap() http.ResponseWriter { return cw.ResponseWriter }

// Flush flushes the underlying writer when it can.
func (cw *countingWriter) Flush() {
	if f, ok := cw.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
