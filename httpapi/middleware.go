package httpapi

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/coffer/coffer"
)

type ctxKey int

const (
	keyRequestID ctxKey = iota
	keyLogger
	keyPrincipal
)

func itoa(n int) string { return strconv.Itoa(n) }

func requestID(r *http.Request) string {
	id, _ := r.Context().Value(keyRequestID).(string)
	return id
}

func logger(r *http.Request) *slog.Logger {
	if l, ok := r.Context().Value(keyLogger).(*slog.Logger); ok {
		return l
	}
	return slog.Default()
}

func principal(r *http.Request) *coffer.Principal {
	p, _ := r.Context().Value(keyPrincipal).(*coffer.Principal)
	return p
}

// newRequestID returns the client's X-Request-Id when it is short and plain, else a
// fresh random one.
func newRequestID(r *http.Request) string {
	if id := r.Header.Get("X-Request-Id"); id != "" && len(id) <= 64 && plainToken(id) {
		return id
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
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

// statusWriter records the status and body size for the access log.
type statusWriter struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (s *statusWriter) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(p []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	n, err := s.ResponseWriter.Write(p)
	s.bytes += int64(n)
	return n, err
}

// Unwrap lets http.ResponseController and sendfile (via ReadFrom) reach the real writer.
func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// ReadFrom keeps sendfile working through the wrapper.
func (s *statusWriter) ReadFrom(r io.Reader) (int64, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	var n int64
	var err error
	if rf, ok := s.ResponseWriter.(io.ReaderFrom); ok {
		n, err = rf.ReadFrom(r)
	} else {
		n, err = io.Copy(writerOnly{s.ResponseWriter}, r)
	}
	s.bytes += n
	return n, err
}

type writerOnly struct{ io.Writer }

// wrap adds request id, structured access log, panic recovery, nosniff and the
// principal to every request.
func (h *Handler) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := newRequestID(r)
		log := h.log.With("request_id", id)
		ctx := context.WithValue(r.Context(), keyRequestID, id)
		ctx = context.WithValue(ctx, keyLogger, log)
		r = r.WithContext(ctx)
		sw := &statusWriter{ResponseWriter: w}
		w.Header().Set("X-Request-Id", id)
		w.Header().Set("X-Content-Type-Options", "nosniff")
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				log.Error("panic", "value", v, "stack", string(debug.Stack()))
				if sw.status == 0 {
					writeErrorStatus(sw, http.StatusInternalServerError, "internal error (request id "+id+")")
				}
			}
			log.Info("request", "method", r.Method, "path", r.URL.Path, "status", sw.status,
				"bytes", sw.bytes, "duration_ms", float64(time.Since(start).Microseconds())/1000)
		}()
		p, err := h.authn.Principal(r)
		if err != nil {
			writeError(sw, r, err)
			return
		}
		r = r.WithContext(context.WithValue(r.Context(), keyPrincipal, p))
		var out http.ResponseWriter = sw
		if _, pattern := h.mux.Handler(r); pattern == "" {
			out = &jsonErrors{ResponseWriter: sw} // the mux's own 404/405 answers, as JSON
		}
		next.ServeHTTP(out, r)
	})
}
