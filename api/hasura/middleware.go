package hasura

import (
	"context"
	"log/slog"
	"net/http"
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
	sw              httpserve.Writer // with the Server-Timing recorder and write deadline
	body            httpserve.Body
	route           string // the matched pattern, for metrics; "" if none
	// muxErrors wraps sw for requests that match no route.
	muxErrors jsonErrors
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
		return &st.sw.Timer
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

// setWriteDeadline sets the time by which r's response must be written.
func setWriteDeadline(w http.ResponseWriter, r *http.Request, t time.Time) {
	st := state(r)
	if st == nil {
		_ = http.NewResponseController(w).SetWriteDeadline(t)
		return
	}
	st.sw.SetDeadline(t)
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
			e := httpserve.Ending{ID: st.id, Route: st.route, Log: st.log, Encode: writeErrorStatus, End: end, Access: h.access}
			e.Finish(recover(), r, sw, st.body.N)
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
	st := &reqState{id: h.ids.For(r), log: h.log}
	st.Context = r.Context()
	r = r.WithContext(st)
	st.sw.Init(w, r, start, h.cfg.WriteTimeout) // downloads extend it by size
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
	st.sw.Timer.Add("auth", time.Since(authStart), "")
	if err != nil {
		writeError(&st.sw, r, err)
		return false
	}
	st.p = p
	return true
}

func itoa(n int) string { return strconv.Itoa(n) }
