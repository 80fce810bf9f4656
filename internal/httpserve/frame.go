package httpserve

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/internal/timing"
)

// Frame is the per-request skeleton a face serves its routes in: it gives every
// request an id (X-Request-Id), nosniff, a State (the request's context), a Writer
// with Server-Timing and a write deadline, a Body under an idle read deadline, the
// metrics' Begin and End, panic recovery and the access log (Ending.Finish). Then
// Before runs (the face's authentication) and Routes route the request; the routes'
// own 404 and 405 answers are written with Encode.
//
// A face sets Routes, Encode, IDs, Log and Access (the others are optional) before
// serving through the Frame, and changes none of them after:
//
//	f := &httpserve.Frame{Routes: mux, Before: authenticate, Encode: encodeXML, IDs: ids,
//		Log: log, Access: access, WriteTimeout: time.Minute, MinWriteRate: 64 << 10}
type Frame struct {
	// Routes route the request, usually a RouteMux's ServeMux: its handlers write to
	// the State's Writer and record their pattern for the metrics.
	Routes http.Handler
	// Before runs before routing; false: it has answered the request, which goes no
	// further. nil: none.
	Before func(st *State, r *http.Request) bool
	Encode ErrorEncoder // the face's error body, for Routes' own answers and panics
	IDs    *IDs
	Log    *slog.Logger // without the request id; State.Logger adds it
	Access *AccessLog
	// Begin, when set, starts a request's metrics and returns their end.
	Begin func() func(route, method string, status int, d time.Duration, in, out int64)
	// Slow clients: a request body read stalls at most ReadIdleTimeout; a response
	// must be written within WriteTimeout of its first byte, plus its size at
	// MinWriteRate bytes a second when a handler says so (AllowWrite). A zero
	// timeout is no limit; a zero MinWriteRate gives no more time for the size.
	ReadIdleTimeout time.Duration
	WriteTimeout    time.Duration
	MinWriteRate    int64
}

// State is what the Frame knows about a request. It is the request's context (see
// Value), made in one allocation with the writer and body wrappers.
type State struct {
	context.Context                   // the request's context before the Frame
	ID              string            // the request id
	Principal       *coffer.Principal // who makes the request, as the face's Before found
	W               Writer            // the response writer, with Server-Timing and write deadline
	Body            Body              // the request body
	log             *slog.Logger      // without the request id; Logger adds it
	route           string            // the matched pattern, for metrics; "" if none
	// muxErrors wraps W for requests that match no route.
	muxErrors ErrorWriter
	// common is the value slices of X-Request-Id and X-Content-Type-Options, here so
	// that setting them allocates nothing.
	common [2]string
}

// stateKey is the context key of a request's State.
type stateKey struct{}

// StateOf returns r's State, nil if r is not served through a Frame.
func StateOf(r *http.Request) *State {
	if st, ok := r.Context().(*State); ok { // the request's own context, as the Frame made it
		return st
	}
	st, _ := r.Context().Value(stateKey{}).(*State)
	return st
}

// Value makes the State the request's context, carrying itself and its
// Server-Timing recorder without two context.WithValue layers.
func (st *State) Value(key any) any {
	switch {
	case key == stateKey{}:
		return st
	case timing.IsKey(key):
		return &st.W.Timer
	}
	return st.Context.Value(key)
}

// Logger returns the request's logger, with its request id.
func (st *State) Logger() *slog.Logger { return st.log.With("request_id", st.ID) }

// ServeHTTP serves r in the Frame.
func (f *Frame) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	st, r := f.begin(w, r)
	var end func(string, string, int, time.Duration, int64, int64)
	if f.Begin != nil {
		end = f.Begin()
	}
	defer func() {
		e := Ending{ID: st.ID, Route: st.route, Log: st.log, Encode: f.Encode, End: end, Access: f.Access}
		e.Finish(recover(), r, &st.W, st.Body.N)
	}()
	if f.Before != nil && !f.Before(st, r) {
		return
	}
	st.muxErrors = ErrorWriter{ResponseWriter: &st.W, Encode: f.Encode} // for the routes' own 404/405 answers
	f.Routes.ServeHTTP(&st.muxErrors, r)                                // a route's handler writes to W (RouteMux)
}

// begin makes the request's State (one allocation for it, the response writer
// wrapper and the body wrapper), makes it the request's context and sets the common
// headers.
func (f *Frame) begin(w http.ResponseWriter, r *http.Request) (*State, *http.Request) {
	start := time.Now()
	st := &State{ID: f.IDs.For(r), log: f.Log}
	st.Context = r.Context()
	r = r.WithContext(st)
	st.W.Init(w, r, start, f.WriteTimeout) // AllowWrite extends it by size
	st.Body = Body{ReadCloser: r.Body, W: w}
	if r.ContentLength != 0 {
		st.Body.Idle = f.ReadIdleTimeout
	}
	r.Body = &st.Body
	st.common = [2]string{st.ID, "nosniff"}
	hd := w.Header()
	hd["X-Request-Id"], hd["X-Content-Type-Options"] = st.common[0:1:1], st.common[1:2:2]
	return st, r
}

// AllowWrite gives r's response, of size bytes, WriteTimeout plus size at
// MinWriteRate (nothing for the size if MinWriteRate is 0) to be written: from its
// first byte when r is served through a Frame (the Writer reads the clock then
// anyway), else from now. Without a WriteTimeout there is no limit to extend.
func (f *Frame) AllowWrite(w http.ResponseWriter, r *http.Request, size int64) {
	if f.WriteTimeout <= 0 {
		return
	}
	if st := StateOf(r); st != nil {
		st.W.Allow(f.writeAllowance(size))
		return
	}
	SetWriteDeadline(w, r, time.Now().Add(f.writeAllowance(size)))
}

// writeAllowance is the time a response of size bytes gets from its first byte:
// WriteTimeout, plus size at MinWriteRate (nothing for the size if MinWriteRate is 0).
func (f *Frame) writeAllowance(size int64) time.Duration {
	if f.MinWriteRate <= 0 {
		return f.WriteTimeout
	}
	return f.WriteTimeout + time.Duration(size/f.MinWriteRate*int64(time.Second))
}

// SetWriteDeadline sets the time by which r's response must be written: on its
// State's Writer when r is served through a Frame (applied with the first byte),
// else on the connection at once.
func SetWriteDeadline(w http.ResponseWriter, r *http.Request, t time.Time) {
	st := StateOf(r)
	if st == nil {
		_ = http.NewResponseController(w).SetWriteDeadline(t)
		return
	}
	st.W.SetDeadline(t)
}

// Routed marks r as routed to pattern (for the metrics) and returns the Frame's
// writer to answer on, without the wrapper for a mux's own answers: for a face that
// routes by itself rather than through a RouteMux. Without a State it returns w.
func Routed(w http.ResponseWriter, r *http.Request, pattern string) http.ResponseWriter {
	st := StateOf(r)
	if st == nil {
		return w
	}
	st.route = pattern
	return &st.W
}

// RouteMux registers handlers that record their route pattern in the request's
// State for the metrics and write to its Writer directly, so each request is routed
// once: the mux's own answers (404, 405, redirects) are the requests without a route,
// and the Frame writes them with the face's encoder.
type RouteMux struct{ *http.ServeMux }

// HandleFunc registers fn for pattern, as http.ServeMux.HandleFunc does.
func (m RouteMux) HandleFunc(pattern string, fn http.HandlerFunc) {
	m.ServeMux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		if st := StateOf(r); st != nil {
			st.route = r.Pattern
			w = &st.W // the Frame's writer, without its wrapper for the mux's answers
		}
		fn(w, r)
	})
}
