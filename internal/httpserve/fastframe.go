package httpserve

import (
	"context"
	"io"
	"time"

	"github.com/coffer/coffer/internal/timing"
)

// FastState is a fast-path request's context, as State is a Frame request's: its id
// and its Server-Timing recorder, in one allocation.
type FastState struct {
	context.Context
	ID    string
	Timer timing.Recorder
}

// Value makes the State's recorder the one timing.FromContext finds.
func (st *FastState) Value(key any) any {
	if timing.IsKey(key) {
		return &st.Timer
	}
	return st.Context.Value(key)
}

// BeginFast returns the state of req, answered on the fast path of a face served
// through f: its id is the client's X-Request-Id when plain, as For gives.
func (f *Frame) BeginFast(req *FastRequest) *FastState {
	client, _ := req.Get("X-Request-Id")
	return &FastState{Context: req.Context(), ID: f.IDs.Of(string(client))}
}

// fastHeaders adds the header fields every answer of f carries: X-Request-Id,
// nosniff and Server-Timing (with the "app" time until now).
func (f *Frame) fastHeaders(st *FastState, req *FastRequest, w *FastWriter) {
	w.add("X-Request-Id", st.ID)
	w.add("X-Content-Type-Options", "nosniff")
	st.Timer.Add("app", time.Since(req.Start), "")
	w.buf = append(st.Timer.AppendHeader(append(w.buf, "Server-Timing: "...)), "\r\n"...)
}

// sendFast sends w's answer (FastWriter.send) under f's write timeout, extended by
// the size at f's MinWriteRate as AllowWrite does, and records it in the metrics and
// the access log as Finish does for route (the pattern net/http would have matched).
func (f *Frame) sendFast(st *FastState, route string, req *FastRequest, w *FastWriter, body io.Reader, size int64) {
	var end func(string, string, int, time.Duration, int64, int64)
	if f.Begin != nil {
		end = f.Begin()
	}
	head, timeout := req.Method == "HEAD", f.WriteTimeout
	if timeout > 0 && !head {
		timeout = f.writeAllowance(size)
	}
	_ = w.send(body, size, head, timeout)
	d := time.Since(req.Start)
	if end != nil {
		end(route, req.Method, w.Status, d, 0, w.Bytes)
	}
	if f.Access.Wants(w.Status) {
		f.Access.Line(req.Method, string(req.Path), st.ID, w.Status, w.Bytes, req.Start, d)
	}
}
