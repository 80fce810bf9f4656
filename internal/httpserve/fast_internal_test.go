package httpserve

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// testFast answers GET /fast and /block (after unblock is closed) on the fast path,
// panics on /panic and declines the rest.
type testFast struct {
	started, unblock chan struct{}
}

func (h *testFast) ServeFast(req *FastRequest, w *FastWriter) bool {
	switch string(req.Path) {
	case "/block":
		close(h.started)
		<-h.unblock
	case "/panic":
		panic("test panic")
	case "/fast":
	default:
		return false
	}
	w.header(200)
	w.add("X-Via", "fast")
	_ = w.send(strings.NewReader("fast"), 4, req.Method == http.MethodHead, time.Second)
	return true
}

// startFast serves h on the fast path of a loopback listener, with net/http
// answering "slow <path>" to what it declines.
func startFast(t *testing.T, h FastHandler, idle, header time.Duration) (*FastServer, string) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	fs := NewFastServer(Listener(ln), h, idle, header, slog.New(slog.DiscardHandler))
	srv := &http.Server{ConnContext: ConnContext, IdleTimeout: idle, ReadHeaderTimeout: header, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Via", "net/http")
		_, _ = io.WriteString(w, "slow "+r.URL.Path)
	})}
	go func() { _ = srv.Serve(fs.Fallback()) }()
	go func() { _ = fs.Serve() }()
	t.Cleanup(func() {
		_ = fs.Shutdown(context.Background())
		_ = srv.Close()
	})
	return fs, ln.Addr().String()
}

// answers sends raw on c and reads n answers: "X-Via: body" each.
func answers(t *testing.T, c net.Conn, br *bufio.Reader, raw string, n int) []string {
	t.Helper()
	if _, err := io.WriteString(c, raw); err != nil {
		t.Fatal(err)
	}
	var out []string
	for range n {
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("after %q: %v", out, err)
		}
		b, _ := io.ReadAll(resp.Body)
		out = append(out, resp.Header.Get("X-Via")+": "+string(b))
	}
	return out
}

func TestFastServerHandsOffAtFirstDecline(t *testing.T) {
	fs, addr := startFast(t, &testFast{}, time.Minute, time.Minute)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	req := func(p string) string { return "GET " + p + " HTTP/1.1\r\nHost: a\r\n\r\n" }
	got := answers(t, c, bufio.NewReader(c), req("/fast")+req("/fast")+req("/other")+req("/fast"), 4)
	want := []string{"fast: fast", "fast: fast", "net/http: slow /other", "net/http: slow /fast"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("got %q, want %q", got, want)
	}
	if a, h := fs.Stats(); a != 2 || h != 1 {
		t.Fatalf("Stats: %d answered, %d handed off; want 2 and 1", a, h)
	}
}

// A client that sends part of a head and stops is cut off after the read-header
// timeout (rounded up to a second); one that sends nothing, after the idle timeout.
func TestFastServerTimeouts(t *testing.T) {
	_, addr := startFast(t, &testFast{}, 1*time.Second, 1*time.Second)
	for _, partial := range []string{"", "GET /fast HTTP/1.1\r\nHo"} {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.WriteString(c, partial)
		start := time.Now()
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		n, err := c.Read(make([]byte, 1))
		if n != 0 || err == nil || time.Since(start) > 5*time.Second {
			t.Fatalf("partial %q: read %d, %v after %v; want the server to close within 2 s", partial, n, err, time.Since(start))
		}
		c.Close()
	}
}

// Shutdown closes idle connections at once and lets a request in flight finish,
// with Connection: close.
func TestFastServerShutdown(t *testing.T) {
	h := &testFast{started: make(chan struct{}), unblock: make(chan struct{})}
	fs, addr := startFast(t, h, time.Minute, time.Minute)
	idle, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	answers(t, idle, bufio.NewReader(idle), "GET /fast HTTP/1.1\r\nHost: a\r\n\r\n", 1)
	busy, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	_, _ = io.WriteString(busy, "GET /block HTTP/1.1\r\nHost: a\r\n\r\n")
	<-h.started
	done := make(chan error, 1)
	go func() { done <- fs.Shutdown(context.Background()) }()
	_ = idle.SetReadDeadline(time.Now().Add(5 * time.Second))
	if n, err := idle.Read(make([]byte, 1)); n != 0 || err != io.EOF {
		t.Fatalf("idle connection: %d, %v; want it closed", n, err)
	}
	select {
	case err := <-done:
		t.Fatalf("Shutdown returned (%v) with a request in flight", err)
	case <-time.After(50 * time.Millisecond):
	}
	close(h.unblock)
	resp, err := http.ReadResponse(bufio.NewReader(busy), nil)
	if err != nil || !resp.Close {
		t.Fatalf("in-flight answer: %v, close %v", err, resp != nil && resp.Close)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// A handler's panic ends its connection, not the server.
func TestFastServerPanic(t *testing.T) {
	_, addr := startFast(t, &testFast{}, time.Minute, time.Minute)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.WriteString(c, "GET /panic HTTP/1.1\r\nHost: a\r\n\r\n")
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if n, err := c.Read(make([]byte, 1)); n != 0 || err == nil {
		t.Fatalf("after a panic: %d, %v; want the connection closed", n, err)
	}
	c.Close()
	c2, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if got := answers(t, c2, bufio.NewReader(c2), "GET /fast HTTP/1.1\r\nHost: a\r\n\r\n", 1); got[0] != "fast: fast" {
		t.Fatal(got)
	}
}

// closedAfter sends send on a new connection to addr and returns how long the server
// took to close it.
func closedAfter(t *testing.T, addr, send string) time.Duration {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Error(err)
		return 0
	}
	defer c.Close()
	_, _ = io.WriteString(c, send)
	start := time.Now()
	_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
	_, _ = io.Copy(io.Discard, c)
	return time.Since(start)
}

// The fast path times heads as net/http does (ReadHeaderTimeout, rounded up to a
// second): a new connection's first head from accept, a pipelined head from when the
// previous answer left, and a head it hands off part-way keeps its deadline.
func TestFastServerTimesHeadsAsNetHTTP(t *testing.T) {
	t.Run("silent new connection", func(t *testing.T) {
		t.Parallel()
		_, addr := startFast(t, &testFast{}, 30*time.Second, time.Second)
		if d := closedAfter(t, addr, ""); d > 3*time.Second {
			t.Fatalf("closed after %v; want the 1 s header timeout, not the idle one", d)
		}
	})
	t.Run("pipelined heads split across segments", func(t *testing.T) {
		t.Parallel()
		_, addr := startFast(t, &testFast{}, time.Minute, time.Second)
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		br, req := bufio.NewReader(c), "GET /fast HTTP/1.1\r\nHost: a\r\n\r\n"
		_, _ = io.WriteString(c, req+req[:7])
		for i := range 4 { // 4 heads, each whole 0.7 s after its first byte: 2.8 s in all
			_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatalf("cut off after %d answers: %v", i, err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			time.Sleep(700 * time.Millisecond)
			_, _ = io.WriteString(c, req[7:]+req[:7])
		}
	})
	t.Run("head trickled, then handed off", func(t *testing.T) {
		t.Parallel()
		_, addr := startFast(t, &testFast{}, time.Minute, 2*time.Second)
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		start := time.Now()
		_, _ = io.WriteString(c, "GET /other HTTP/1.1\r\nHost: a\r\n")
		time.Sleep(1800 * time.Millisecond)
		_, _ = io.WriteString(c, "Y: 1\n") // a bare LF: handed off now
		time.Sleep(1600 * time.Millisecond)
		_, _ = io.WriteString(c, "\r\n") // 3.4 s: past the head's deadline (at most 3 s)
		_ = c.SetReadDeadline(time.Now().Add(3 * time.Second))
		if resp, err := http.ReadResponse(bufio.NewReader(c), nil); err == nil {
			t.Fatalf("a head trickled over %v was answered (%s); the header timeout is 2 s", time.Since(start), resp.Status)
		}
	})
}
