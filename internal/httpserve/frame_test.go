package httpserve_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/internal/httpserve"
)

// frameEnd is what the metrics saw of a request served in a Frame.
type frameEnd struct {
	route, method string
	status        int
	in, out       int64
}

// frameServer serves a toy face in a Frame on 127.0.0.1: Before lets in requests
// with "Authorization: ok" as principal "tester" and answers others 401; the routes
// greet, read bodies, panic and write slowly. It returns the server, the log and the
// metrics' ends.
func frameServer(t *testing.T) (*httptest.Server, fileLog, func() []frameEnd) {
	logs := fileLog(filepath.Join(t.TempDir(), "log"))
	lf, err := os.Create(string(logs))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lf.Close() })
	log := slog.New(slog.NewTextHandler(lf, nil))
	var mu sync.Mutex
	var ends []frameEnd
	mux := http.NewServeMux()
	m := httpserve.RouteMux{ServeMux: mux}
	m.HandleFunc("GET /hello/{name}", func(w http.ResponseWriter, r *http.Request) {
		st := httpserve.StateOf(r)
		_, _ = io.WriteString(w, "hello "+r.PathValue("name")+" from "+st.Principal.Role+" "+st.ID)
	})
	m.HandleFunc("POST /read", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusNoContent)
	})
	m.HandleFunc("GET /panic", func(http.ResponseWriter, *http.Request) { panic("toy boom") })
	f := &httpserve.Frame{Routes: mux, Encode: encodeText, IDs: httpserve.NewIDs(), Log: log,
		Access:       httpserve.NewAccessLog(httpserve.AccessLogConfig{Mode: httpserve.AccessLogOn}, log),
		WriteTimeout: 100 * time.Millisecond, MinWriteRate: 1 << 10}
	f.Before = func(st *httpserve.State, r *http.Request) bool {
		if r.Header.Get("Authorization") != "ok" {
			f.Encode(&st.W, http.StatusUnauthorized, "who are you")
			return false
		}
		st.Principal = &coffer.Principal{Role: "tester"}
		return true
	}
	f.Begin = func() func(string, string, int, time.Duration, int64, int64) {
		return func(route, method string, status int, _ time.Duration, in, out int64) {
			mu.Lock()
			defer mu.Unlock()
			ends = append(ends, frameEnd{route, method, status, in, out})
		}
	}
	slow := func(allow bool) http.HandlerFunc { // two flushed writes 400 ms apart
		return func(w http.ResponseWriter, r *http.Request) {
			if allow {
				f.AllowWrite(w, r, 10<<10) // 10 s more at 1 KB/s
			}
			rc := http.NewResponseController(w)
			_, _ = io.WriteString(w, "first ")
			_ = rc.Flush()
			time.Sleep(400 * time.Millisecond)
			_, _ = io.WriteString(w, strings.Repeat("x", 64<<10))
			_ = rc.Flush()
		}
	}
	m.HandleFunc("GET /slow", slow(false))
	m.HandleFunc("GET /allowed", slow(true))
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return srv, logs, func() []frameEnd { mu.Lock(); defer mu.Unlock(); return append([]frameEnd(nil), ends...) }
}

// fileLog is a log file's path; the server's goroutines write it through the
// operating system, the tests read it.
type fileLog string

// String returns what is logged so far.
func (l fileLog) String() string { b, _ := os.ReadFile(string(l)); return string(b) }

// frameGet sends method path with body to srv, authorised unless auth is false, and
// returns the answer with its body read.
func frameGet(t *testing.T, srv *httptest.Server, method, path, body string, auth bool) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
	if auth {
		req.Header.Set("Authorization", "ok")
	}
	req.Header.Set("X-Request-Id", frameID(path))
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// frameID is the request id the tests send for path.
func frameID(path string) string { return "rid" + strings.ReplaceAll(path, "/", "-") }

// Every request in a Frame gets its id, nosniff and Server-Timing, runs Before
// (whose principal the routes see), is routed with its pattern recorded for the
// metrics, and is logged; the routes' own 404 and 405 and a panic are answered with
// the face's encoder.
func TestFrame(t *testing.T) {
	srv, logs, ends := frameServer(t)
	for _, c := range []struct {
		method, path, body string
		auth               bool
		status             int
		answer, route      string
	}{
		{"GET", "/hello/ann", "", true, 200, "hello ann from tester rid-hello-ann", "GET /hello/{name}"},
		{"GET", "/hello/ann", "", false, 401, "401: who are you", ""},
		{"POST", "/read", "twelve bytes", true, 204, "", "POST /read"},
		{"GET", "/nowhere", "", true, 404, "404: Not Found", ""},
		{"DELETE", "/read", "", true, 405, "405: Method Not Allowed", ""},
		{"GET", "/panic", "", true, 500, "500: internal error (request id rid-panic)", "GET /panic"},
	} {
		resp, body := frameGet(t, srv, c.method, c.path, c.body, c.auth)
		id := frameID(c.path)
		hd := resp.Header
		if resp.StatusCode != c.status || body != c.answer || hd.Get("X-Request-Id") != id ||
			hd.Get("X-Content-Type-Options") != "nosniff" || !strings.HasPrefix(hd.Get("Server-Timing"), "app;") {
			t.Errorf("%s %s: %d %q %v", c.method, c.path, resp.StatusCode, body, hd)
		}
		got := ends()
		want := frameEnd{c.route, c.method, c.status, int64(len(c.body)), int64(len(c.answer))}
		if len(got) == 0 || got[len(got)-1] != want {
			t.Errorf("%s %s: metrics saw %+v, want %+v", c.method, c.path, got, want)
		}
		if line := "request_id=" + id + " method=" + c.method; !strings.Contains(logs.String(), line) {
			t.Errorf("%s %s: no access log line %q in %s", c.method, c.path, line, logs)
		}
	}
	if !strings.Contains(logs.String(), "msg=panic request_id=rid-panic value=\"toy boom\"") {
		t.Errorf("the panic is not logged: %s", logs)
	}
}

// A response must be written within WriteTimeout of its first byte, unless a route
// gives it time for its size (AllowWrite).
func TestFrameAllowWrite(t *testing.T) {
	srv, _, _ := frameServer(t)
	if resp, body := frameGet(t, srv, "GET", "/allowed", "", true); resp.StatusCode != 200 || len(body) != 6+64<<10 {
		t.Errorf("allowed: %d, %d bytes", resp.StatusCode, len(body))
	}
	req, _ := http.NewRequest("GET", srv.URL+"/slow", nil)
	req.Header.Set("Authorization", "ok")
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if b, err := io.ReadAll(resp.Body); err == nil && len(b) == 6+64<<10 {
		t.Errorf("slow: the whole body arrived after the write timeout")
	}
}

// SetWriteDeadline outside a Frame sets the connection's deadline at once.
func TestSetWriteDeadlineOutsideFrame(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if httpserve.StateOf(r) != nil {
			t.Error("a State outside a Frame")
		}
		httpserve.SetWriteDeadline(w, r, time.Now().Add(-time.Second))
		_, _ = io.WriteString(w, "late")
	}))
	defer srv.Close()
	if resp, err := srv.Client().Get(srv.URL); err == nil {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Errorf("past deadline: answered %d %q", resp.StatusCode, b)
	}
}

// A Frame without timeouts sets no deadline: its answers go out whenever written.
func TestFrameNoTimeouts(t *testing.T) {
	mux := http.NewServeMux()
	httpserve.RouteMux{ServeMux: mux}.HandleFunc("GET /late", func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(50 * time.Millisecond)
		_, _ = io.WriteString(w, "late")
	})
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	srv := httptest.NewServer(&httpserve.Frame{Routes: mux, Encode: encodeText, IDs: httpserve.NewIDs(), Log: log,
		Access: httpserve.NewAccessLog(httpserve.AccessLogConfig{Mode: httpserve.AccessLogOff}, log)})
	defer srv.Close()
	if resp, body := frameGet(t, srv, "GET", "/late", "", false); resp.StatusCode != 200 || body != "late" {
		t.Errorf("%d %q", resp.StatusCode, body)
	}
}
