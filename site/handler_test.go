package site

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/zstd"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/site/audit"
)

// testSiteDoc is the site the handler tests serve.
const testSiteDoc = `{"id":"www","hosts":["www.example.test"],"notFound":"/404.html",
 "headers":[{"match":"*.html","set":{"X-Frame-Options":"DENY"}}],
 "routes":[
  {"path":"/old/*","target":{"redirect":{"to":"/new/:splat","status":308}}},
  {"path":"/ext","target":{"redirect":{"to":"https://elsewhere.test/x"}}},
  {"path":"/api/*","stripPrefix":"/api","target":{"http":{"url":"http://origin.test/v1/"}},"tags":["api"]},
  {"path":"/media/*","stripPrefix":"/media","target":{"bucket":{"id":"media","prefix":"m/"}},
   "cacheControl":[{"match":"*.png","value":"max-age=60"}]},
  {"path":"/docs/*.md","target":{"bucket":{"id":"docs"}}},
  {"path":"/app/*","target":{"bucket":{"id":"web"}},"fallback":"/app/index.html","notFound":"/app/missing.html",
   "tags":["app"],"headers":{"X-Route":"app"},
   "cacheControl":[{"match":"/app/assets/**","value":"public, max-age=31536000, immutable"},{"match":"*.html","value":"no-cache"}]},
  {"path":"/nocompress/*","compress":false,"target":{"bucket":{"id":"web"}}},
  {"path":"/*","target":{"bucket":{"id":"web","prefix":"site/"}}}
 ]}`

// bigJS is a compressible body above the minimum size.
var bigJS = bytes.Repeat([]byte("function hello(name) { return 'hello, ' + name; }\n"), 200)

// testFiles are the bucket files of the test site.
func testFiles() map[string]memFile {
	html := func(s string) memFile {
		return memFile{data: []byte(s), typ: "text/html; charset=utf-8", etag: `"` + s[:4] + `"`}
	}
	return map[string]memFile{
		"web/site/index.html":       html("home page"),
		"web/site/about/index.html": html("about page"),
		"web/site/404.html":         html("site 404 page"),
		"web/site/app.js":           {data: bigJS, typ: "text/javascript", etag: `"appjs"`},
		"web/site/app.js.br":        {data: brotliOf(bigJS), typ: "application/x-brotli", etag: `"appjsbr"`},
		"web/site/big.css":          {data: bigJS, typ: "text/css", etag: `"bigcss"`},
		"web/site/small.css":        {data: []byte("body{}"), typ: "text/css", etag: `"small"`},
		"web/site/img.png":          {data: bytes.Repeat([]byte{1}, 4096), typ: "image/png", etag: `"png"`},
		"web/app/index.html":        html("spa shell"),
		"web/app/missing.html":      html("app 404 page"),
		"web/app/assets/x.js":       {data: []byte("x()"), typ: "text/javascript", etag: `"xjs"`},
		"web/nocompress/big.css":    {data: bigJS, typ: "text/css", etag: `"nc"`},
		"media/m/a.png":             {data: []byte("png"), typ: "image/png", etag: `"apng"`},
		"docs/docs/readme.md":       {data: []byte("# readme"), typ: "text/markdown", etag: `"md"`},
	}
}

// brotliOf compresses b for a precompressed sibling.
func brotliOf(b []byte) []byte {
	var buf bytes.Buffer
	w := brotli.NewWriterLevel(&buf, 5)
	w.Write(b)
	w.Close()
	return buf.Bytes()
}

// compileDoc parses and compiles doc for tenant t1.
func compileDoc(t testing.TB, doc string) *Compiled {
	t.Helper()
	s, err := Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	c, err := Compile(s, "t1", memOrigins{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// harness is a site served over loopback.
type harness struct {
	srv     *httptest.Server
	buckets *memBuckets
	edge    *memEdge
	h       *Handler
	mu      sync.Mutex
	records []audit.Record
}

// newHarness serves doc with the test files and an upstream object at
// "http:http://origin.test/v1/|users".
func newHarness(t testing.TB, doc string) *harness {
	t.Helper()
	c := compileDoc(t, doc)
	x := &harness{buckets: &memBuckets{files: testFiles()}, edge: &memEdge{objects: map[string]memFile{
		"http:http://origin.test/v1/|users": {data: []byte(`[]`), typ: "application/json", etag: `"u1"`, tags: []string{"users"}, cc: "max-age=5"},
	}}}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	x.h = NewHandler(HandlerConfig{Edge: x.edge, Log: quiet, Audit: func(r *audit.Record) {
		x.mu.Lock()
		x.records = append(x.records, *r)
		x.mu.Unlock()
	}})
	x.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		x.h.Serve(w, r, Request{Tenant: "t1", Site: c, Buckets: x.buckets, Client: "127.0.0.1", RequestID: "rid-1", UserID: "u"})
	}))
	t.Cleanup(x.srv.Close)
	return x
}

// do sends method path with the headers given as "Name: value" strings.
func (x *harness) do(t testing.TB, method, path string, headers ...string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, x.srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range headers {
		k, v, _ := strings.Cut(h, ": ")
		req.Header.Add(k, v)
	}
	tr := &http.Transport{DisableCompression: true}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	return resp, readAll(resp.Body)
}

// raw sends a request line as is, for paths a client would not send.
func (x *harness) raw(t *testing.T, target string) *http.Response {
	t.Helper()
	conn, err := net.Dial("tcp", x.srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: www.example.test\r\nConnection: close\r\n\r\n", target)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

func TestServeRoutes(t *testing.T) {
	x := newHarness(t, testSiteDoc)
	for _, c := range []struct {
		method, path string
		hdr          []string
		status       int
		body         string
		want         map[string]string // headers ("" : absent)
	}{
		{"GET", "/", nil, 200, "home page", map[string]string{"Content-Type": "text/html; charset=utf-8", "X-Frame-Options": "DENY", "Etag": `"home"`, "X-Cache": "BYPASS"}},
		{"GET", "//about/", nil, 200, "about page", nil},
		{"GET", "/about/", nil, 200, "about page", nil},
		{"HEAD", "/", nil, 200, "", map[string]string{"Content-Length": "9"}},
		{"GET", "/media/a.png", nil, 200, "png", map[string]string{"Cache-Control": "max-age=60", "Vary": ""}},
		{"GET", "/docs/readme.md", nil, 200, "# readme", nil},
		{"GET", "/docs/sub/readme.md", nil, 404, "site 404 page", map[string]string{"Cache-Control": "no-cache"}},
		{"GET", "/app/settings/profile", nil, 200, "spa shell", map[string]string{"Cache-Control": "no-cache", "X-Route": "app", "Surrogate-Key": "app", "X-Frame-Options": "DENY"}},
		{"GET", "/app/assets/x.js", nil, 200, "x()", map[string]string{"Cache-Control": "public, max-age=31536000, immutable"}},
		{"GET", "/app/assets/gone.js", nil, 404, "app 404 page", nil},
		{"GET", "/app/assets/gone.js", []string{"Accept: text/html,*/*"}, 200, "spa shell", nil},
		{"GET", "/old/a/b?x=1", nil, 308, "", map[string]string{"Location": "/new/a/b?x=1"}},
		{"GET", "/ext?q=2", nil, 301, "", map[string]string{"Location": "https://elsewhere.test/x?q=2"}},
		{"GET", "/nothing.txt", nil, 404, "site 404 page", nil},
		{"POST", "/", nil, 405, "method not allowed\n", map[string]string{"Allow": "GET, HEAD"}},
		{"GET", "/api/users", nil, 200, "[]", map[string]string{"X-Cache": "HIT", "Surrogate-Key": "api users", "Cache-Control": "max-age=5"}},
		{"GET", "/api/none", nil, 404, "site 404 page", nil},
	} {
		resp, body := x.do(t, c.method, c.path, c.hdr...)
		if resp.StatusCode != c.status || string(body) != c.body {
			t.Errorf("%s %s: %d %q, want %d %q", c.method, c.path, resp.StatusCode, body, c.status, c.body)
		}
		for k, v := range c.want {
			if got := resp.Header.Get(k); got != v {
				t.Errorf("%s %s: %s = %q, want %q", c.method, c.path, k, got, v)
			}
		}
	}
	if n := x.buckets.badKeys.Load(); n != 0 {
		t.Errorf("%d bad keys reached Buckets", n)
	}
}

func TestServeUpstreamRequest(t *testing.T) {
	x := newHarness(t, testSiteDoc)
	x.do(t, "GET", "/api/users")
	g := x.edge.gets[0]
	if g.Scope != "t1/www" || g.Path != "/api/users" || g.Key != "users" || g.Origin.ID() != "http:http://origin.test/v1/" ||
		len(g.Tags) != 1 || g.Tags[0] != "api" {
		t.Fatalf("edge request %+v", g)
	}
}

func TestServeUpstreamFailure(t *testing.T) {
	x := newHarness(t, testSiteDoc)
	for _, c := range []struct {
		err    error
		status int
	}{
		{coffer.Errorf(coffer.EUNAVAILABLE, "origin down"), 502},
		{coffer.Internal(io.ErrUnexpectedEOF, "fetch"), 502},
		{fmt.Errorf("fetch: %w", timeoutErr{}), 504},
		{coffer.Errorf(coffer.EINVALID, "bad key"), 400},
	} {
		x.edge.fail = c.err
		resp, body := x.do(t, "GET", "/api/users")
		if resp.StatusCode != c.status || len(body) > 64 {
			t.Errorf("%v: %d %q, want %d and a short body", c.err, resp.StatusCode, body, c.status)
		}
	}
}

func TestServeBucketFailure(t *testing.T) {
	x := newHarness(t, testSiteDoc)
	for _, c := range []struct {
		err    error
		status int
		body   string
	}{
		{coffer.Errorf(coffer.EUNAVAILABLE, "overloaded"), 502, "bad gateway\n"},
		{coffer.Internal(io.ErrUnexpectedEOF, "meta"), 500, "internal error (request rid-1)\n"},
		{coffer.Errorf(coffer.ETOOMANY, "slow down"), 429, "too many requests\n"},
	} {
		x.buckets.fail = c.err
		resp, body := x.do(t, "GET", "/about/")
		if resp.StatusCode != c.status || string(body) != c.body {
			t.Errorf("%v: %d %q, want %d %q", c.err, resp.StatusCode, body, c.status, c.body)
		}
	}
}

// timeoutErr is a net.Error timeout.
type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

func TestServeHostilePaths(t *testing.T) {
	x := newHarness(t, testSiteDoc)
	for _, p := range []string{
		"/../etc/passwd", "/%2e%2e/etc/passwd", "/a/%2E%2e/b", "/a%2Fb", "/a%2fb", "/a%00b", "/a\\b", "/a/%5c/b",
		"/" + strings.Repeat("x", 1100), "/.", "/a/./b", "/a/..", "/%252e%252e/x", "/app/%2e%2e/%2e%2e/secret", "/a%0d%0aX:%20y",
		"/a%E2%80%AEb.html", "/a%C2%85b", "/%ff.html", "/api/../../x", "/api/%2e%2e/x", "/api/a%2F..%2F..%2Fx",
	} {
		resp := x.raw(t, p)
		if resp.StatusCode != 400 {
			t.Errorf("GET %s: %d, want 400", p, resp.StatusCode)
		}
	}
	if len(x.buckets.opened) != 0 || len(x.edge.gets) != 0 {
		t.Errorf("hostile paths reached Buckets %q or the edge %+v", x.buckets.opened, x.edge.gets)
	}
}

func TestServeCompression(t *testing.T) {
	x := newHarness(t, testSiteDoc)
	for _, c := range []struct {
		path, ae, rng string
		coding        string // Content-Encoding
		vary          bool
		etag          string
	}{
		{"/app.js", "br", "", "br", true, `"appjsbr-br"`},               // the precompressed sibling
		{"/app.js", "gzip, br;q=0.9", "", "gzip", true, `"appjs-gzip"`}, // q wins over preference; no gzip sibling: derived
		{"/big.css", "gzip;q=0.5, br;q=0.1", "", "gzip", true, `"bigcss-gzip"`},
		{"/big.css", "br;q=0, gzip", "", "gzip", true, `"bigcss-gzip"`},
		{"/big.css", "gzip, zstd, br", "", "br", true, `"bigcss-br"`},
		{"/big.css", "zstd, gzip", "", "zstd", true, `"bigcss-zstd"`},
		{"/big.css", "*", "", "br", true, `"bigcss-br"`},
		{"/big.css", "gzip;q=0.5, identity", "", "", true, `"bigcss"`},
		{"/big.css", "identity", "", "", true, `"bigcss"`},
		{"/big.css", "", "", "", true, `"bigcss"`},
		{"/big.css", "br", "bytes=0-9", "", true, `"bigcss"`},
		{"/small.css", "br", "", "", true, `"small"`},
		{"/img.png", "br", "", "", false, `"png"`},
		{"/nocompress/big.css", "br", "", "", false, `"nc"`},
	} {
		hdr := []string{}
		if c.ae != "" {
			hdr = append(hdr, "Accept-Encoding: "+c.ae)
		}
		if c.rng != "" {
			hdr = append(hdr, "Range: "+c.rng)
		}
		resp, body := x.do(t, "GET", c.path, hdr...)
		got := resp.Header.Get("Content-Encoding")
		vary := resp.Header.Get("Vary") == "Accept-Encoding"
		if got != c.coding || vary != c.vary || resp.Header.Get("Etag") != c.etag {
			t.Errorf("%s %q: encoding %q vary %v etag %s, want %q %v %s", c.path, c.ae, got, vary, resp.Header.Get("Etag"), c.coding, c.vary, c.etag)
			continue
		}
		plain := decode(t, got, body)
		want := testFiles()["web/site"+c.path].data
		if c.path == "/nocompress/big.css" {
			want = bigJS
		}
		if c.rng != "" {
			want = want[:10]
		}
		if !bytes.Equal(plain, want) {
			t.Errorf("%s %q: body decodes to %d bytes, want %d", c.path, c.ae, len(plain), len(want))
		}
	}
}

func TestServeConditionalEncodings(t *testing.T) {
	x := newHarness(t, testSiteDoc)
	for _, c := range []struct {
		ae, inm string
		status  int
	}{
		{"br", `"bigcss-br"`, 304},
		{"br", `"bigcss"`, 200}, // the identity's tag does not validate the br answer
		{"", `"bigcss"`, 304},
		{"", `"bigcss-br"`, 200},
		{"gzip", `"bigcss-br"`, 200},
	} {
		hdr := []string{"If-None-Match: " + c.inm}
		if c.ae != "" {
			hdr = append(hdr, "Accept-Encoding: "+c.ae)
		}
		if resp, _ := x.do(t, "GET", "/big.css", hdr...); resp.StatusCode != c.status {
			t.Errorf("%q If-None-Match %s: %d, want %d", c.ae, c.inm, resp.StatusCode, c.status)
		}
	}
	resp, body := x.do(t, "HEAD", "/big.css", "Accept-Encoding: br")
	if resp.Header.Get("Content-Encoding") != "br" || len(body) != 0 || resp.ContentLength <= 0 || resp.ContentLength >= int64(len(bigJS)) {
		t.Errorf("HEAD br: %q, %d bytes, length %d", resp.Header.Get("Content-Encoding"), len(body), resp.ContentLength)
	}
}

func TestServeWithoutEdge(t *testing.T) {
	x := newHarness(t, testSiteDoc)
	x.h = NewHandler(HandlerConfig{Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if resp, _ := x.do(t, "GET", "/api/users"); resp.StatusCode != 502 {
		t.Errorf("upstream without an edge: %d, want 502", resp.StatusCode)
	}
	for path, coding := range map[string]string{"/app.js": "br", "/big.css": ""} { // sibling only
		if resp, _ := x.do(t, "GET", path, "Accept-Encoding: br"); resp.StatusCode != 200 || resp.Header.Get("Content-Encoding") != coding {
			t.Errorf("%s without an edge: %d %q, want 200 %q", path, resp.StatusCode, resp.Header.Get("Content-Encoding"), coding)
		}
	}
}

// decode undoes coding.
func decode(t *testing.T, coding string, b []byte) []byte {
	t.Helper()
	var r io.Reader
	switch coding {
	case "":
		return b
	case "br":
		r = brotli.NewReader(bytes.NewReader(b))
	case "gzip":
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		r = zr
	case "zstd":
		zr, err := zstd.NewReader(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		defer zr.Close()
		r = zr
	}
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("%s: %v", coding, err)
	}
	return out
}

func TestServeDerivedOnce(t *testing.T) {
	x := newHarness(t, testSiteDoc)
	var wg sync.WaitGroup
	errs := make(chan string, 50)
	for i := 0; i < 50; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, body := x.do(t, "GET", "/big.css", "Accept-Encoding: gzip")
			if resp.Header.Get("Content-Encoding") != "gzip" || len(body) == 0 || len(body) >= len(bigJS) {
				errs <- fmt.Sprintf("%d %q %d bytes", resp.StatusCode, resp.Header.Get("Content-Encoding"), len(body))
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if n := x.edge.makes.Load(); n != 1 {
		t.Errorf("made the gzip copy %d times, want once", n)
	}
}

func TestServeAudit(t *testing.T) {
	x := newHarness(t, testSiteDoc)
	_, body := x.do(t, "GET", "/about/")
	x.do(t, "GET", "/api/users")
	x.do(t, "GET", "/ext")
	x.raw(t, "/%2e%2e/x")
	if len(x.records) != 4 {
		t.Fatalf("%d records, want 4", len(x.records))
	}
	r := x.records[0]
	if r.Status != 200 || r.Bytes != int64(len(body)) || r.Target != "bucket:web" || r.Cache != "BYPASS" ||
		r.Tenant != "t1" || r.Site != "www" || r.Path != "/about/" || r.Client != "127.0.0.1" || r.RequestID != "rid-1" ||
		r.UserID != "u" || r.Method != "GET" || r.Time.IsZero() || r.Duration < 0 {
		t.Errorf("record %+v", r)
	}
	if r := x.records[1]; r.Target != "http:http://origin.test/v1/" || r.Cache != "HIT" || r.Bytes != 2 {
		t.Errorf("upstream record %+v", r)
	}
	if r := x.records[2]; r.Target != "redirect" || r.Status != 301 {
		t.Errorf("redirect record %+v", r)
	}
	if r := x.records[3]; r.Status != 400 || r.Target != "" {
		t.Errorf("bad path record %+v", r)
	}
	st := x.h.Stats("t1/www")
	if st.Requests.Load() != 4 || st.Hits.Load() != 1 || st.Bytes.Load() != int64(len(body))+2+int64(len("bad request path\n")) {
		t.Errorf("stats: %d requests, %d hits, %d bytes", st.Requests.Load(), st.Hits.Load(), st.Bytes.Load())
	}
	off := newHarness(t, strings.Replace(testSiteDoc, `"id":"www"`, `"id":"www","audit":false`, 1))
	off.do(t, "GET", "/")
	if len(off.records) != 0 {
		t.Errorf("audit false: %d records", len(off.records))
	}
}

// TestServeAllowsWriteTime: a body about to be sent is announced to AllowWrite with
// its size (the time a slow client gets, as the fast path gives it); a HEAD is not.
func TestServeAllowsWriteTime(t *testing.T) {
	x := newHarness(t, testSiteDoc)
	var mu sync.Mutex
	var sizes []int64
	x.h.cfg.AllowWrite = func(_ http.ResponseWriter, _ *http.Request, size int64) {
		mu.Lock()
		sizes = append(sizes, size)
		mu.Unlock()
	}
	x.do(t, "GET", "/img.png")
	x.do(t, "HEAD", "/img.png")
	x.do(t, "GET", "/missing.png") // the site's 404 page, 13 bytes
	mu.Lock()
	defer mu.Unlock()
	if fmt.Sprint(sizes) != "[4096 13]" {
		t.Fatalf("AllowWrite told %v, want [4096 13]", sizes)
	}
}
