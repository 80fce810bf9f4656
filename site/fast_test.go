package site

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coffer/coffer/internal/httpserve"
	"github.com/coffer/coffer/internal/wiretest"
)

// peekEdge is a memEdge that is a FastEdge: its objects are fresh HITs, its
// derived copies are at hand once made.
type peekEdge struct{ *memEdge }

var _ FastEdge = peekEdge{}

func (e peekEdge) Peek(req EdgeRequest) (*Object, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	f, ok := e.objects[req.Origin.ID()+"|"+req.Key]
	if !ok {
		return nil, true
	}
	return f.object(CacheHit), false
}

func (e peekEdge) PeekDerived(req DerivedRequest) *Object {
	e.mu.Lock()
	d := e.derived[req.Scope+"|"+req.Path+"|"+req.Variant+"|"+req.SourceETag]
	e.mu.Unlock()
	if d == nil {
		return nil
	}
	select {
	case <-d.done:
	default:
		return nil
	}
	if d.err != nil {
		return nil
	}
	return memFile{data: d.data, typ: req.Type, tags: req.Tags}.object(CacheHit)
}

func (peekEdge) CountPeeks(int, int) {}

// serveSite serves h's site c on a loopback port, through the fast path (fast) or
// net/http alone, and returns its address and the fast server (nil: none).
func serveSite(t testing.TB, h *Handler, c *Compiled, buckets Buckets, fast bool) (string, *httpserve.FastServer) {
	t.Helper()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := httpserve.Listener(l)
	sr := Request{Tenant: "t1", Site: c, Buckets: buckets, Client: "127.0.0.1", RequestID: "rid-1"}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.Serve(w, r, sr) }),
		ErrorLog: nil, IdleTimeout: time.Minute, ReadHeaderTimeout: 10 * time.Second}
	t.Cleanup(func() { srv.Close() })
	if !fast {
		go srv.Serve(ln)
		return l.Addr().String(), nil
	}
	frame := &httpserve.Frame{IDs: httpserve.NewIDs(), Log: quiet,
		Access: httpserve.NewAccessLog(httpserve.AccessLogConfig{Mode: httpserve.AccessLogOff}, quiet)}
	fs := httpserve.NewFastServer(ln, httpserve.FastHandlerFunc(func(req *httpserve.FastRequest, w *httpserve.FastWriter) bool {
		st := frame.BeginFast(req)
		r := sr
		r.RequestID = st.ID
		return h.ServeFast(frame, st, req, w, r)
	}), time.Minute, 10*time.Second, quiet)
	go srv.Serve(fs.Fallback())
	go fs.Serve()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		fs.Shutdown(ctx)
	})
	return l.Addr().String(), fs
}

// renderSiteAnswer renders resp but for what only the Frame or the clock writes
// (Date, X-Request-Id, X-Content-Type-Options, Server-Timing: net/http's path here
// has no Frame), headers sorted.
func renderSiteAnswer(resp *http.Response) string {
	return wiretest.Render(resp, func(k string, vs []string) (string, bool) {
		switch k {
		case "Date", "X-Request-Id", "X-Content-Type-Options", "Server-Timing":
			return "", false
		}
		return strings.Join(vs, "|"), true
	})
}

// TestServeFastAnswersAsServe: the same handler behind the fast path and behind
// net/http alone answers raw request streams alike (but for the Frame's headers),
// and the fast path answers the requests it should.
func TestServeFastAnswersAsServe(t *testing.T) {
	doc := strings.Replace(testSiteDoc, `{"path":"/*","target"`,
		`{"path":"/typed/*","stripPrefix":"/typed","target":{"bucket":{"id":"web","prefix":"site/"}},"headers":{"Content-Type":"text/x-custom","Vary":"Origin"}},
  {"path":"/*","target"`, 1)
	c := compileDoc(t, doc)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	var addrs [2]string
	var fs *httpserve.FastServer
	for i, fast := range []bool{true, false} {
		edge := peekEdge{&memEdge{objects: map[string]memFile{
			"http:http://origin.test/v1/|users": {data: []byte(`[]`), typ: "application/json", etag: `"u1"`, tags: []string{"users"}, cc: "max-age=5"},
			"http:http://origin.test/v1/|big":   {data: bigJS, typ: "text/javascript", etag: `"big"`, tags: []string{"js", "api"}},
		}}}
		h := NewHandler(HandlerConfig{Edge: edge, Log: quiet})
		var f *httpserve.FastServer
		addrs[i], f = serveSite(t, h, c, &memBuckets{files: testFiles()}, fast)
		if fast {
			fs = f
		}
		// Warm the derived copies alike.
		for _, p := range []string{"/api/big", "/big.css", "/app/assets/x.js"} {
			wiretest.Exchange(t, addrs[i], "GET "+p+" HTTP/1.1\r\nHost: h\r\nAccept-Encoding: gzip\r\nConnection: close\r\n\r\n", renderSiteAnswer)
		}
	}
	streams := []struct {
		raw  string
		fast int // requests the fast path answers
	}{
		{"GET /api/users HTTP/1.1\r\nHost: h\r\n\r\n", 1},
		{"GET /api/big HTTP/1.1\r\nHost: h\r\nAccept-Encoding: gzip\r\n\r\n", 1},
		{"GET /api/big HTTP/1.1\r\nHost: h\r\nAccept-Encoding: zstd\r\n\r\n", 0}, // no copy yet
		{"HEAD /api/big HTTP/1.1\r\nHost: h\r\n\r\n", 1},
		{"GET / HTTP/1.1\r\nHost: h\r\n\r\n", 1},
		{"GET //about/ HTTP/1.1\r\nHost: h\r\n\r\n", 1},
		{"GET /app.js HTTP/1.1\r\nHost: h\r\nAccept-Encoding: br, gzip\r\n\r\n", 1},
		{"GET /big.css HTTP/1.1\r\nHost: h\r\nAccept-Encoding: gzip\r\n\r\n", 1},
		{"GET /small.css HTTP/1.1\r\nHost: h\r\nAccept-Encoding: gzip\r\n\r\n", 1},
		{"HEAD /img.png HTTP/1.1\r\nHost: h\r\nAccept-Encoding: gzip\r\n\r\n", 1},
		{"GET /media/a.png?v=2 HTTP/1.1\r\nHost: h\r\n\r\n", 1},
		{"GET /app/assets/x.js HTTP/1.1\r\nHost: h\r\n\r\n", 1},
		{"GET /typed/big.css HTTP/1.1\r\nHost: h\r\nAccept-Encoding: gzip\r\n\r\n", 1},
		{"GET /nocompress/big.css HTTP/1.1\r\nHost: h\r\nAccept-Encoding: br\r\n\r\n", 1},
		{"GET /img.png HTTP/1.1\r\nHost: h\r\nRange: bytes=0-9\r\n\r\nGET /img.png HTTP/1.1\r\nHost: h\r\n\r\n", 0},
		{"GET /img.png HTTP/1.1\r\nHost: h\r\n\r\nGET /img.png HTTP/1.1\r\nHost: h\r\nIf-None-Match: \"png\"\r\n\r\n", 1},
		{"GET /app/settings HTTP/1.1\r\nHost: h\r\n\r\n", 0},
		{"GET /nothing.txt HTTP/1.1\r\nHost: h\r\n\r\n", 0},
		{"GET /old/x HTTP/1.1\r\nHost: h\r\n\r\n", 0},
		{"GET /%61pp.js HTTP/1.1\r\nHost: h\r\n\r\n", 0},
	}
	got := make([][2][]string, len(streams))
	var wg sync.WaitGroup
	want := 0
	for i, s := range streams {
		want += s.fast
		for j, addr := range addrs {
			wg.Go(func() { got[i][j] = wiretest.Exchange(t, addr, s.raw, renderSiteAnswer) })
		}
	}
	wg.Wait()
	for i, s := range streams {
		fast, slow := got[i][0], got[i][1]
		if len(slow) == 0 || !slices.Equal(fast, slow) {
			t.Errorf("%q:\nfast path:\n%s\n\nnet/http:\n%s", s.raw, strings.Join(fast, "\n--\n"), strings.Join(slow, "\n--\n"))
		}
	}
	if answered, _ := fs.Stats(); int(answered) != want {
		t.Errorf("the fast path answered %d requests, want %d", answered, want)
	}
}

// BenchmarkServeFast serves an edge HIT (2 KiB JSON) and a bucket file (4 KiB
// PNG) on one keep-alive connection through the fast path and through net/http
// alone; allocs/op include the client's (a raw one, allocating nothing per
// request).
func BenchmarkServeFast(b *testing.B) {
	c := compileDoc(b, testSiteDoc)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	body := bytes.Repeat([]byte("x"), 2048)
	for _, fast := range []bool{true, false} {
		edge := peekEdge{&memEdge{objects: map[string]memFile{
			"http:http://origin.test/v1/|users": {data: body, typ: "application/json", etag: `"u1"`, tags: []string{"users"}, cc: "max-age=5"},
		}}}
		h := NewHandler(HandlerConfig{Edge: edge, Log: quiet})
		addr, _ := serveSite(b, h, c, oneFileBuckets{memFile{data: bytes.Repeat([]byte{1}, 4096), typ: "image/png", etag: `"png"`}}, fast)
		name := map[bool]string{true: "fast", false: "net-http"}[fast]
		for _, p := range []string{"/api/users", "/img.png"} {
			b.Run(name+p, func(b *testing.B) {
				conn, err := net.Dial("tcp", addr)
				if err != nil {
					b.Fatal(err)
				}
				defer conn.Close()
				req := []byte("GET " + p + " HTTP/1.1\r\nHost: www.example.test\r\n\r\n")
				rd := bufio.NewReaderSize(conn, 64<<10)
				b.ReportAllocs()
				cpu0 := cpuNow()
				for i := 0; i < b.N; i++ {
					if _, err := conn.Write(req); err != nil {
						b.Fatal(err)
					}
					if err := readRawAnswer(rd); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(cpuNow()-cpu0)/float64(b.N), "cpu-ns/op")
			})
		}
	}
}

// oneFileBuckets answers every Open with the same file.
type oneFileBuckets struct{ f memFile }

func (o oneFileBuckets) Open(context.Context, string, string) (*Object, error) {
	return o.f.object(CacheBypass), nil
}

// readRawAnswer reads one 200 answer with a Content-Length from rd.
func readRawAnswer(rd *bufio.Reader) error {
	size := int64(-1)
	for first := true; ; first = false {
		line, err := rd.ReadSlice('\n')
		if err != nil {
			return err
		}
		if first && !bytes.HasPrefix(line, []byte("HTTP/1.1 200 ")) {
			return fmt.Errorf("answer %q", line)
		}
		if len(line) <= 2 {
			break
		}
		if v, ok := bytes.CutPrefix(line, []byte("Content-Length: ")); ok {
			size, _ = strconv.ParseInt(string(bytes.TrimSpace(v)), 10, 64)
		}
	}
	if size < 0 {
		return fmt.Errorf("no Content-Length")
	}
	_, err := rd.Discard(int(size))
	return err
}

// epochBuckets are memBuckets whose files were modified at the Unix epoch.
type epochBuckets struct{ *memBuckets }

func (b epochBuckets) Open(ctx context.Context, bucket, key string) (*Object, error) {
	obj, err := b.memBuckets.Open(ctx, bucket, key)
	if err == nil {
		obj.ModTime = time.Unix(0, 0)
	}
	return obj, err
}

// TestEpochModTimeIsNoTime: a modification time at the Unix epoch is no time
// (http.ServeContent's test) for every answer, a 404 document's included: no
// Last-Modified.
func TestEpochModTimeIsNoTime(t *testing.T) {
	c := compileDoc(t, testSiteDoc)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	addr, _ := serveSite(t, NewHandler(HandlerConfig{Log: quiet}), c, epochBuckets{&memBuckets{files: testFiles()}}, false)
	for _, p := range []string{"/", "/nothing.txt"} {
		got := wiretest.Exchange(t, addr, "GET "+p+" HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n", renderSiteAnswer)
		if len(got) != 1 || strings.Contains(got[0], "Last-Modified") {
			t.Errorf("GET %s: %q", p, got)
		}
	}
}
