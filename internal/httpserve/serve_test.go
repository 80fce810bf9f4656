package httpserve_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/internal/httpserve"
)

// encodeText is a face's encoder for the tests: "status: msg" in a text/x-face body.
func encodeText(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/x-face")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(strconv.Itoa(status) + ": " + msg))
}

// The face's encoder answers the errors of handlers it does not write (ServeContent,
// the mux) and their own bodies are dropped; successes pass through untouched, and a
// face's Answer sends a status with no body.
func TestErrorWriter(t *testing.T) {
	content := strings.NewReader("0123456789")
	mux := http.NewServeMux()
	mux.HandleFunc("GET /file", func(w http.ResponseWriter, r *http.Request) {
		http.ServeContent(w, r, "", time.Time{}, content)
	})
	mux.HandleFunc("GET /empty", func(w http.ResponseWriter, r *http.Request) {
		w.(*httpserve.ErrorWriter).Answer(http.StatusPreconditionFailed)
		_, _ = w.Write([]byte("dropped"))
	})
	for _, c := range []struct {
		method, path, rng string
		status            int
		ctype, body       string
	}{
		{"GET", "/file", "", 200, "text/plain; charset=utf-8", "0123456789"},
		{"GET", "/file", "bytes=2-4", 206, "text/plain; charset=utf-8", "234"},
		{"GET", "/file", "bytes=20-", 416, "text/x-face", "416: requested range not satisfiable"},
		{"GET", "/nowhere", "", 404, "text/x-face", "404: Not Found"},
		{"POST", "/file", "", 405, "text/x-face", "405: Method Not Allowed"},
		{"GET", "/empty", "", 412, "", ""},
	} {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(c.method, c.path, nil)
		if c.rng != "" {
			req.Header.Set("Range", c.rng)
		}
		mux.ServeHTTP(&httpserve.ErrorWriter{ResponseWriter: rec, Encode: encodeText}, req)
		if rec.Code != c.status || rec.Header().Get("Content-Type") != c.ctype || rec.Body.String() != c.body {
			t.Errorf("%s %s %q: %d %q %q, want %d %q %q", c.method, c.path, c.rng, rec.Code,
				rec.Header().Get("Content-Type"), rec.Body, c.status, c.ctype, c.body)
		}
	}
}

// Writer records the status sent and the body bytes however the body is written, and
// sends Server-Timing with the "app" entry.
func TestWriter(t *testing.T) {
	for name, write := range map[string]func(w *httpserve.Writer){
		"write":    func(w *httpserve.Writer) { _, _ = w.Write([]byte("hello")) },
		"readfrom": func(w *httpserve.Writer) { _, _ = w.ReadFrom(strings.NewReader("hello")) },
		"status":   func(w *httpserve.Writer) { w.WriteHeader(201); w.WriteHeader(500); _, _ = w.Write([]byte("hello")) },
		"flush": func(w *httpserve.Writer) {
			var f http.Flusher = w // connect-go asserts it for gRPC
			f.Flush()
			_, _ = w.Write([]byte("hello"))
		},
	} {
		rec := httptest.NewRecorder()
		var w httpserve.Writer
		w.Init(rec, httptest.NewRequest("GET", "/", nil), time.Now(), time.Minute)
		write(&w)
		want := http.StatusOK
		if name == "status" { // the first status is the one sent
			want = http.StatusCreated
		}
		if w.Status != want || w.Bytes != 5 || rec.Body.String() != "hello" {
			t.Errorf("%s: status %d, bytes %d, body %q", name, w.Status, w.Bytes, rec.Body)
		}
		if st := rec.Header().Get("Server-Timing"); !strings.HasPrefix(st, "app;") {
			t.Errorf("%s: Server-Timing %q", name, st)
		}
		if rec.Flushed != (name == "flush") {
			t.Errorf("%s: flushed %v", name, rec.Flushed)
		}
	}
}

// serveEnding runs handler under Finish as a face's middleware does and returns the
// answer, the log and the status the metrics saw.
func serveEnding(t *testing.T, handler func(w http.ResponseWriter)) (*httptest.ResponseRecorder, string, int) {
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	rec, r := httptest.NewRecorder(), httptest.NewRequest("GET", "/x", nil)
	seen := -1
	func() {
		var w httpserve.Writer
		w.Init(rec, r, time.Now(), time.Minute)
		defer func() {
			e := httpserve.Ending{ID: "rid", Route: "GET /x", Log: log, Encode: encodeText,
				End:    func(_, _ string, status int, _ time.Duration, _, _ int64) { seen = status },
				Access: httpserve.NewAccessLog(httpserve.AccessLogConfig{Mode: httpserve.AccessLogOn}, log)}
			e.Finish(recover(), r, &w, 0)
		}()
		handler(&w)
	}()
	return rec, logs.String(), seen
}

// A panic is logged and answered by the face's encoder with the request id; the
// metrics and access log see every request.
func TestFinish(t *testing.T) {
	rec, logs, seen := serveEnding(t, func(http.ResponseWriter) { panic("boom") })
	if rec.Code != 500 || rec.Body.String() != "500: internal error (request id rid)" || seen != 500 ||
		!strings.Contains(logs, "msg=panic") || !strings.Contains(logs, "msg=request") {
		t.Errorf("panic: %d %q, metrics %d, log %s", rec.Code, rec.Body, seen, logs)
	}
	rec, logs, seen = serveEnding(t, func(w http.ResponseWriter) { w.WriteHeader(204) })
	if rec.Code != 204 || seen != 204 || strings.Contains(logs, "msg=panic") || !strings.Contains(logs, "status=204") {
		t.Errorf("no panic: %d, metrics %d, log %s", rec.Code, seen, logs)
	}
	rec, logs, seen = serveEnding(t, func(http.ResponseWriter) {}) // net/http answers 200
	if rec.Code != 200 || seen != 200 || !strings.Contains(rec.Header().Get("Server-Timing"), "app;dur=") ||
		!strings.Contains(logs, "status=200") {
		t.Errorf("nothing written: %d, metrics %d, Server-Timing %q, log %s", rec.Code, seen, rec.Header().Get("Server-Timing"), logs)
	}
	defer func() {
		if v := recover(); v != http.ErrAbortHandler {
			t.Errorf("ErrAbortHandler: recovered %v", v)
		}
	}()
	serveEnding(t, func(http.ResponseWriter) { panic(http.ErrAbortHandler) })
}

// timeoutErr is a net.Error that timed out.
type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

// ClientFault tells a stalled body (408) and a client that left (499) from the
// server's own failures.
func TestClientFault(t *testing.T) {
	live := httptest.NewRequest("GET", "/", nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	gone := live.WithContext(ctx)
	for _, c := range []struct {
		r            *http.Request
		bodyErr, err error
		status       int
	}{
		{live, timeoutErr{}, errors.New("x"), http.StatusRequestTimeout},
		{live, errors.New("connection reset by peer"), errors.New("x"), httpserve.StatusClientClosed},
		{gone, nil, errors.Join(errors.New("put"), context.Canceled), httpserve.StatusClientClosed},
		{live, nil, context.Canceled, 0},
		{gone, nil, errors.New("disk full"), 0},
	} {
		status, _, ok := httpserve.ClientFault(c.r, c.bodyErr, c.err)
		if status != c.status || ok != (c.status != 0) {
			t.Errorf("%v, %v: %d %v, want %d", c.bodyErr, c.err, status, ok, c.status)
		}
	}
}

// StatusOf maps each domain error kind, wrapped or not, to its status, and anything
// else to 500.
func TestStatusOf(t *testing.T) {
	for code, want := range map[string]int{coffer.ENOTFOUND: 404, coffer.ERANGE: 416, coffer.ETOOMANY: 429,
		coffer.EINTERNAL: 500, coffer.EUNAVAILABLE: 503} {
		err := errors.Join(errors.New("ctx"), coffer.Errorf(code, "x"))
		if got := httpserve.StatusOf(err); got != want {
			t.Errorf("%s: %d, want %d", code, got, want)
		}
	}
	if got := httpserve.StatusOf(errors.New("plain")); got != 500 {
		t.Errorf("plain error: %d", got)
	}
}
