package httpapi

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/internal/httpserve"
	"github.com/coffer/coffer/internal/timing"
	"github.com/coffer/coffer/metrics"
)

// reqState is what the middleware knows about a request. It is the request's context
// (see Value), made in one allocation with the writer and body wrappers.
type reqState struct {
	context.Context // the request's context before wrap
	id              string
	log             *slog.Logger // without the request id; logger adds it when needed
	p               *coffer.Principal
	timer           timing.Recorder
	sw              statusWriter
	body            httpserve.Body
	route           string // the matched pattern, for metrics; "" if none
	// muxErrors wraps sw for requests that match no route.
	muxErrors jsonErrors
	// deadline is the response's write deadline, applied just before its first byte;
	// zero: writeTimeout from then. It counts from the response, not the request, so
	// that an upload whose body takes long to arrive still gets its answer.
	deadline     time.Time
	writeTimeout time.Duration
}

type ctxKey struct{}

func state(r *http.Request) *reqState {
	if st, ok := r.Context().(*reqState); ok { // the request's own context, as wrap made it
		return st
	}
	st, _ := r.Context().Value(ctxKey{}).(*reqState)
	return st
}

// Value makes the request state the request's context, carrying itself and its
// Server-Timing recorder without two context.WithValue layers.
func (st *reqState) Value(key any) any {
	switch {
	case key == ctxKey{}:
		return st
	case timing.IsKey(key):
		return &st.timer
	}
	return st.Context.Value(key)
}

func requestID(r *http.Request) string {
	if st := state(r); st != nil {
		return st.id
	}
	return ""
}

func logger(r *http.Request) *slog.Logger {
	if st := state(r); st != nil {
		return st.log.With("request_id", st.id)
	}
	return slog.Default()
}

func principal(r *http.Request) *coffer.Principal {
	if st := state(r); st != nil {
		return st.p
	}
	return nil
}

// statusWriter records the status and body size for the access log and metrics, and
// adds the Server-Timing header just before the headers go out.
type statusWriter struct {
	http.ResponseWriter
	status int
	bytes  int64
	st     *reqState
	start  time.Time
	conn   *httpserve.Conn // nil unless served through httpserve.Listener
}

// headers runs once, before the first byte of the response.
func (s *statusWriter) headers(code int) {
	if s.status != 0 {
		return
	}
	s.status = code
	now := time.Now()
	if s.st.deadline.IsZero() {
		s.st.deadline = now.Add(s.st.writeTimeout)
	}
	s.applyDeadline()
	s.st.timer.Add("app", now.Sub(s.start), "")
	s.ResponseWriter.Header()["Server-Timing"] = []string{s.st.timer.Header()}
}

// applyDeadline sets the write deadline on the connection: once per response, when
// the first byte is about to go out (a deadline only matters to writes).
func (s *statusWriter) applyDeadline() {
	if d, ok := s.ResponseWriter.(interface{ SetWriteDeadline(time.Time) error }); ok {
		_ = d.SetWriteDeadline(s.st.deadline)
		return
	}
	_ = http.NewResponseController(s.ResponseWriter).SetWriteDeadline(s.st.deadline)
}

// setWriteDeadline sets the time by which r's response must be written.
func setWriteDeadline(w http.ResponseWriter, r *http.Request, t time.Time) {
	st := state(r)
	if st == nil {
		_ = http.NewResponseController(w).SetWriteDeadline(t)
		return
	}
	st.deadline = t
	if st.sw.status != 0 { // already writing
		st.sw.applyDeadline()
	}
}

func (s *statusWriter) WriteHeader(code int) {
	if code >= 100 && code < 200 { // informational: the real header comes later
		s.ResponseWriter.WriteHeader(code)
		return
	}
	s.headers(code)
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(p []byte) (int, error) {
	s.headers(http.StatusOK)
	n, err := s.ResponseWriter.Write(p)
	s.bytes += int64(n)
	return n, err
}

// Unwrap lets http.ResponseController and sendfile (via ReadFrom) reach the real writer.
func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// ReadFrom keeps sendfile working through the wrapper for files on disk. For other
// sources it avoids the standard library's fallback, which allocates a 32 KB buffer
// per response: contents already in memory go out in one write, streams through a
// pooled buffer.
func (s *statusWriter) ReadFrom(r io.Reader) (int64, error) {
	s.headers(http.StatusOK)
	n, err := httpserve.WriteFrom(s.ResponseWriter, s.conn, r)
	s.bytes += n
	return n, err
}

// wrap adds request id, Server-Timing, metrics, structured access log, panic recovery,
// nosniff and the principal to every request.
func (h *Handler) wrap() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		st, r := h.begin(w, r)
		sw := &st.sw
		var end func(string, string, int, time.Duration, int64, int64)
		if h.cfg.Metrics != nil {
			end = h.cfg.Metrics.Begin()
		}
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				st.log.Error("panic", "request_id", st.id, "value", v, "stack", string(debug.Stack()))
				if sw.status == 0 {
					writeErrorStatus(sw, http.StatusInternalServerError, "internal error (request id "+st.id+")")
				}
			}
			if sw.status == 0 { // nothing written: net/http writes an empty 200 after us
				sw.applyDeadline()
			}
			d := time.Since(sw.start)
			if end != nil {
				end(st.route, r.Method, sw.status, d, st.body.N, sw.bytes)
			}
			h.access.Request(r, st.id, sw.status, sw.bytes, sw.start, d)
		}()
		if !h.authenticate(st, r) {
			return
		}
		st.muxErrors = newJSONErrors(sw)  // for the mux's own 404/405 answers, as JSON
		h.mux.ServeHTTP(&st.muxErrors, r) // a route's handler writes to sw (routeMux)
	})
}

// begin makes the request's state (one allocation for it, the response writer
// wrapper and the body wrapper), puts it in the context and sets the common headers.
func (h *Handler) begin(w http.ResponseWriter, r *http.Request) (*reqState, *http.Request) {
	start := time.Now()
	st := &reqState{id: h.ids.For(r), log: h.log, writeTimeout: h.cfg.WriteTimeout} // downloads extend it by size
	st.Context = r.Context()
	r = r.WithContext(st)
	st.sw = statusWriter{ResponseWriter: w, st: st, start: start, conn: httpserve.ConnOf(r)}
	st.body = httpserve.Body{ReadCloser: r.Body, W: w}
	if r.ContentLength != 0 {
		st.body.Idle = h.cfg.ReadIdleTimeout
	}
	r.Body = &st.body
	vals := []string{st.id, "nosniff"} // one allocation for both value slices
	hd := w.Header()
	hd["X-Request-Id"], hd["X-Content-Type-Options"] = vals[0:1:1], vals[1:2:2]
	return st, r
}

// authenticate sets st's principal, or answers the request with the error.
func (h *Handler) authenticate(st *reqState, r *http.Request) bool {
	if r.URL.Path == "/metrics" && metrics.TokenMatches(h.cfg.MetricsToken, r) {
		return true // this bearer token is the metrics token, not a JWT: serveMetrics lets it in
	}
	authStart := time.Now()
	p, err := h.authn.Principal(r)
	st.timer.Add("auth", time.Since(authStart), "")
	if err != nil {
		writeError(&st.sw, r, err)
		return false
	}
	st.p = p
	return true
}

func itoa(n int) string { return strconv.Itoa(n) }
