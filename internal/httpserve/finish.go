package httpserve

import (
	"log/slog"
	"net/http"
	"runtime/debug"
	"time"
)

// Ending is what Finish needs to end a request: its id and matched route, where to
// log, the face's encoder for a panic's answer, the metrics' end of the request (nil:
// none) and the access log.
type Ending struct {
	ID     string
	Route  string // the matched pattern, for metrics; "" if none
	Log    *slog.Logger
	Encode ErrorEncoder
	End    func(route, method string, status int, d time.Duration, in, out int64)
	Access *AccessLog
}

// Finish ends r, served through w with in request body bytes read, after its
// handlers returned or panicked with v (recover's value; nil if none). A panic is
// logged with its stack and, if nothing was written, answered as an internal error
// naming the request id; http.ErrAbortHandler panics on. Then the write deadline is
// applied to net/http's own answer if the handlers wrote nothing, and the metrics
// and the access log get the request.
func (e Ending) Finish(v any, r *http.Request, w *Writer, in int64) {
	if v != nil {
		e.recovered(v, w)
	}
	if w.Status == 0 { // nothing written: net/http writes an empty 200 after us, with
		w.headers(http.StatusOK) // the deadline and Server-Timing (an empty protobuf answer)
	}
	d := time.Since(w.Start)
	if e.End != nil {
		e.End(e.Route, r.Method, w.Status, d, in, w.Bytes)
	}
	e.Access.Request(r, e.ID, w.Status, w.Bytes, w.Start, d)
}

// recovered logs the panic v and answers it if nothing was written yet.
func (e Ending) recovered(v any, w *Writer) {
	if v == http.ErrAbortHandler {
		panic(v)
	}
	e.Log.Error("panic", "request_id", e.ID, "value", v, "stack", string(debug.Stack()))
	if w.Status == 0 {
		e.Encode(w, http.StatusInternalServerError, "internal error (request id "+e.ID+")")
	}
}
