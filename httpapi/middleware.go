package httpapi

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"log/slog"
	"math"
	"net/http"
	"os"
	"runtime/debug"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/internal/timing"
)

// reqState is what the middleware knows about a request, in one context value.
type reqState struct {
	id    string
	log   *slog.Logger // without the request id; logger adds it when needed
	p     *coffer.Principal
	timer timing.Recorder
}

type ctxKey struct{}

func state(r *http.Request) *reqState {
	st, _ := r.Context().Value(ctxKey{}).(*reqState)
	return st
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

// newRequestID returns the client's X-Request-Id when it is short and plain, else a
// fresh random one.
func (h *Handler) newRequestID(r *http.Request) string {
	if id := r.Header.Get("X-Request-Id"); id != "" && len(id) <= 64 && plainToken(id) {
		return id
	}
	return h.ids.next()
}

// idGen makes request ids: a random per-process prefix and a counter, unique without
// a call to the system's random source per request.
type idGen struct {
	prefix string
	n      atomic.Uint64
}

func newIDGen() *idGen {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return &idGen{prefix: hex.EncodeToString(b[:])}
}

func (g *idGen) next() string {
	return g.prefix + strconv.FormatUint(g.n.Add(1), 36)
}

func plainToken(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// statusWriter records the status and body size for the access log and metrics, and
// adds the Server-Timing header just before the headers go out.
type statusWriter struct {
	http.ResponseWriter
	status int
	bytes  int64
	timer  *timing.Recorder
	start  time.Time
	conn   *batchConn // nil unless served through Listener
}

// headers runs once, before the first byte of the response.
func (s *statusWriter) headers(code int) {
	if s.status != 0 {
		return
	}
	s.status = code
	s.timer.Add("app", time.Since(s.start), "")
	s.ResponseWriter.Header().Set("Server-Timing", s.timer.Header())
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
	var n int64
	var err error
	switch src := sourceOf(r); {
	case src.mem != nil:
		var m int
		m, err = writeBatched(s.ResponseWriter, s.conn, src.mem.NextBytes(src.limit))
		n = int64(m)
	case src.file:
		if rf, ok := s.ResponseWriter.(io.ReaderFrom); ok {
			n, err = rf.ReadFrom(r)
			break
		}
		fallthrough
	default:
		buf := copyBufs.Get().(*[]byte)
		n, err = io.CopyBuffer(writerOnly{s.ResponseWriter}, r, *buf)
		copyBufs.Put(buf)
	}
	s.bytes += n
	return n, err
}

// byteSource is a reader over bytes in memory that can hand out its next n bytes
// without copying (the content cache's readers).
type byteSource interface{ NextBytes(n int64) []byte }

type source struct {
	mem   byteSource
	limit int64
	file  bool // an *os.File: sendfile applies
}

// sourceOf looks through the io.LimitedReader that http.ServeContent wraps bodies in.
func sourceOf(r io.Reader) source {
	limit := int64(math.MaxInt64)
	if lr, ok := r.(*io.LimitedReader); ok {
		r, limit = lr.R, lr.N
	}
	switch v := r.(type) {
	case byteSource:
		return source{mem: v, limit: limit}
	case *os.File:
		return source{file: true}
	}
	return source{}
}

var copyBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

type writerOnly struct{ io.Writer }

// countingBody counts request body bytes for the metrics and, when idle > 0, gives
// every read idle time to make progress: a client that stops sending is cut off
// instead of pinning a goroutine and a connection. At the end of the body the read
// deadline is cleared (the server's own background read must not time out).
type countingBody struct {
	io.ReadCloser
	n    int64
	rc   *http.ResponseController
	idle time.Duration
}

func (c *countingBody) Read(p []byte) (int, error) {
	if c.idle > 0 {
		_ = c.rc.SetReadDeadline(time.Now().Add(c.idle))
	}
	n, err := c.ReadCloser.Read(p)
	c.n += int64(n)
	if err == io.EOF && c.idle > 0 { // a stalled body keeps its deadline, so the server's drain fails too
		_ = c.rc.SetReadDeadline(time.Time{})
		c.idle = 0
	}
	return n, err
}

// wrap adds request id, Server-Timing, metrics, structured access log, panic recovery,
// nosniff and the principal to every request.
func (h *Handler) wrap() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		st := &reqState{id: h.newRequestID(r), log: h.log}
		ctx := context.WithValue(r.Context(), ctxKey{}, st)
		r = r.WithContext(timing.NewContext(ctx, &st.timer))
		sw := &statusWriter{ResponseWriter: w, timer: &st.timer, start: start, conn: connOf(r)}
		rc := http.NewResponseController(w)
		_ = rc.SetWriteDeadline(start.Add(h.cfg.WriteTimeout)) // downloads extend it by size
		body := &countingBody{ReadCloser: r.Body, rc: rc}
		if r.ContentLength != 0 {
			body.idle = h.cfg.ReadIdleTimeout
		}
		r.Body = body
		w.Header().Set("X-Request-Id", st.id)
		w.Header().Set("X-Content-Type-Options", "nosniff")
		_, route := h.mux.Handler(r) // the pattern, for metrics; ServeHTTP below sets PathValue
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
			d := time.Since(start)
			if end != nil {
				end(route, r.Method, sw.status, d, body.n, sw.bytes)
			}
			if h.log.Enabled(r.Context(), slog.LevelInfo) {
				st.log.Info("request", "request_id", st.id, "method", r.Method, "path", r.URL.Path,
					"status", sw.status, "bytes", sw.bytes, "duration_ms", float64(d.Microseconds())/1000)
			}
		}()
		authStart := time.Now()
		p, err := h.authn.Principal(r)
		st.timer.Add("auth", time.Since(authStart), "")
		if err != nil {
			writeError(sw, r, err)
			return
		}
		st.p = p
		var out http.ResponseWriter = sw
		if route == "" {
			out = &jsonErrors{ResponseWriter: sw} // the mux's own 404/405 answers, as JSON
		}
		h.mux.ServeHTTP(out, r)
	})
}

func itoa(n int) string { return strconv.Itoa(n) }
