package hasura_test

import (
	"bytes"
	"crypto/md5"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/coffer/coffer/internal/wiretest"
)

// fastPair is the same data behind two servers: one with the HTTP/1.1 fast path
// (the default), one with net/http alone (--fast-path=false).
type fastPair struct {
	fast, slow *env
	ids        map[*env]map[string]string // per server: the file ids by placeholder
	alice      string                     // a user JWT (files in priv are alice's)
}

func newFastPair(t *testing.T) *fastPair {
	p := &fastPair{ids: map[*env]map[string]string{}, alice: token(t, "user", "alice")}
	p.fast = newEnv(t, envOptions{jwtSecret: jwtConfig, rules: matrixRules})
	p.slow = newEnv(t, envOptions{jwtSecret: jwtConfig, rules: matrixRules, slow: true})
	for _, e := range []*env{p.fast, p.slow} {
		mustStatus(t, e.do("POST", "/v1/buckets", strings.NewReader(`{"id":"pub","public":true}`), true), http.StatusCreated, nil)
		mustStatus(t, e.do("POST", "/v1/buckets", strings.NewReader(`{"id":"priv","cacheControl":""}`), true), http.StatusCreated, nil)
		p.ids[e] = map[string]string{
			"{pub}":  e.uploadOne("pub", "photo one.png", content(100<<10)).ID,
			"{html}": e.uploadOne("pub", "page.html", []byte("<html><script>x</script></html>")).ID,
			"{big}":  e.uploadOne("pub", "big.bin", content(3<<20)).ID, // above the content cache's size limit: streams
			"{priv}": e.uploadData("Bearer "+p.alice, "priv", content(10<<10)),
		}
	}
	return p
}

// stream sends raw (placeholders filled in for e) on one connection and returns
// every response read until the server closes the connection or sends nothing for
// 1.5 s, normalized: status, header fields but the ones that differ from run to
// run, and body. (The write side stays open: net/http takes a half-closed
// connection for a client that left and cancels the request in flight.)
func (p *fastPair) stream(t *testing.T, e *env, raw string) []string {
	t.Helper()
	for k, v := range p.ids[e] {
		raw = strings.ReplaceAll(raw, k, v)
	}
	raw = strings.ReplaceAll(raw, "{alice}", "Bearer "+p.alice)
	raw = strings.ReplaceAll(raw, "{etag}", `"`+fmt.Sprintf("%x", md5.Sum(content(100<<10)))+`"`)
	raw = strings.ReplaceAll(raw, "{etag-priv}", `"`+fmt.Sprintf("%x", md5.Sum(content(10<<10)))+`"`)
	return wiretest.Exchange(t, e.srv.Addr, raw, func(resp *http.Response) string { return normalize(resp, p.ids[e]) })
}

// normalize renders resp without what differs between two servers with the same
// data: Date, Last-Modified, Server-Timing, generated request ids, file ids.
func normalize(resp *http.Response, ids map[string]string) string {
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	var b strings.Builder
	fmt.Fprintf(&b, "%s close=%v", resp.Status, resp.Close)
	var keys []string
	for k := range resp.Header {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		switch v := strings.Join(resp.Header[k], "|"); {
		case k == "Date" || k == "Last-Modified" || k == "Server-Timing":
			fmt.Fprintf(&b, "\n%s: (%d)", k, len(resp.Header[k]))
		case k == "X-Request-Id" && v != "client-id-1":
			fmt.Fprintf(&b, "\n%s: (generated)", k)
		default:
			fmt.Fprintf(&b, "\n%s: %s", k, v)
		}
	}
	s := b.String() + fmt.Sprintf("\nbody %d bytes (err %v)\n", len(body), err)
	if len(body) < 1024 {
		s += string(body) // with its ids normalized below
	} else {
		s += fmt.Sprintf("checksum %x", wiretest.Checksum(body))
	}
	for k, v := range ids {
		s = strings.ReplaceAll(s, v, k)
	}
	return s
}

// fastStreams are raw request streams, on one connection each: the fast path's
// cases, the cases it leaves to net/http (with a request it served before them on
// the same connection), and request smuggling attempts.
var fastStreams = map[string]string{
	"public GET":         "GET /v1/files/{pub} HTTP/1.1\r\nHost: a\r\n\r\n",
	"public HEAD":        "HEAD /v1/files/{pub} HTTP/1.1\r\nHost: a\r\n\r\n",
	"active type":        "GET /v1/files/{html} HTTP/1.1\r\nHost: a\r\n\r\n",
	"streamed, 3 MB":     "GET /v1/files/{big} HTTP/1.1\r\nHost: a\r\n\r\n",
	"JWT, owner":         "GET /v1/files/{priv} HTTP/1.1\r\nHost: 127.0.0.1:80\r\nauthorization: {alice}\r\nX-Request-Id: client-id-1\r\n\r\n",
	"JWT, HEAD":          "HEAD /v1/files/{priv} HTTP/1.1\r\nHost: a\r\nAuthorization: {alice}\r\n\r\n",
	"anonymous, private": "GET /v1/files/{priv} HTTP/1.1\r\nHost: a\r\n\r\n",
	"admin":              "GET /v1/files/{priv} HTTP/1.1\r\nHost: a\r\nX-Hasura-Admin-Secret: " + adminSecret + "\r\n\r\n",
	"bad admin secret":   "GET /v1/files/{pub} HTTP/1.1\r\nHost: a\r\nX-Hasura-Admin-Secret: nope\r\n\r\n",
	"bad JWT":            "GET /v1/files/{pub} HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer x.y.z\r\n\r\n",
	"two Authorization":  "GET /v1/files/{priv} HTTP/1.1\r\nHost: a\r\nAuthorization: {alice}\r\nAuthorization: {alice}\r\n\r\n",
	"missing file":       "GET /v1/files/00000000-0000-0000-0000-000000000000 HTTP/1.1\r\nHost: a\r\n\r\n",
	"HEAD, missing file": "HEAD /v1/files/00000000-0000-0000-0000-000000000000 HTTP/1.1\r\nHost: a\r\n\r\n",
	"range, then HEAD":   "GET /v1/files/{pub} HTTP/1.1\r\nHost: a\r\nRange: bytes=0-9\r\n\r\nHEAD /v1/files/{pub} HTTP/1.1\r\nHost: a\r\n\r\n",
	"pipelined, then range, then fast": "GET /v1/files/{pub} HTTP/1.1\r\nHost: a\r\n\r\n" +
		"GET /v1/files/{pub} HTTP/1.1\r\nHost: a\r\nRange: bytes=10-19\r\n\r\n" +
		"GET /v1/files/{html} HTTP/1.1\r\nHost: a\r\n\r\n",
	"pipelined three": strings.Repeat("GET /v1/files/{pub} HTTP/1.1\r\nHost: a\r\n\r\n", 3),
	"close ends it":   "GET /v1/files/{pub} HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\nGET /v1/files/{pub} HTTP/1.1\r\nHost: a\r\n\r\n",
	"conditional":     "GET /v1/files/{pub} HTTP/1.1\r\nHost: a\r\nIf-None-Match: \"x\"\r\n\r\n",
	"revalidation": "GET /v1/files/{pub} HTTP/1.1\r\nHost: a\r\nIf-None-Match: {etag}\r\n\r\n" +
		"HEAD /v1/files/{pub} HTTP/1.1\r\nHost: a\r\nIf-None-Match: \"a\", W/{etag}\r\n\r\n" +
		"GET /v1/files/{html} HTTP/1.1\r\nHost: a\r\nIf-None-Match: *\r\n\r\n" +
		"GET /v1/files/{pub} HTTP/1.1\r\nHost: a\r\nIf-None-Match: \"a\",,\"b\"\r\n\r\n" +
		"GET /v1/files/{pub} HTTP/1.1\r\nHost: a\r\nIf-None-Match: garbage, {etag}\r\n\r\n" +
		"GET /v1/files/{priv} HTTP/1.1\r\nHost: a\r\nAuthorization: {alice}\r\nIf-None-Match: {etag-priv}\r\n\r\n",
	"revalidation with a date": "GET /v1/files/{pub} HTTP/1.1\r\nHost: a\r\nIf-None-Match: {etag}\r\nIf-Modified-Since: Mon, 02 Jan 2006 15:04:05 GMT\r\n\r\n",
	"transform query":          "GET /v1/files/{pub}?w=10 HTTP/1.1\r\nHost: a\r\n\r\n",
	"empty query":              "GET /v1/files/{pub}? HTTP/1.1\r\nHost: a\r\n\r\n",
	"trailing slash":           "GET /v1/files/{pub}/ HTTP/1.1\r\nHost: a\r\n\r\n",
	"dot segment":              "GET /v1/files/../files/{pub} HTTP/1.1\r\nHost: a\r\n\r\n",
	"escaped id":               "GET /v1/files/%7Bpub%7D HTTP/1.1\r\nHost: a\r\n\r\n",
	"other route":              "GET /v1/files/{pub} HTTP/1.1\r\nHost: a\r\n\r\nGET /v1/version HTTP/1.1\r\nHost: a\r\n\r\n",
	"CL body smuggles a request": "GET /v1/files/{pub} HTTP/1.1\r\nHost: a\r\nContent-Length: 45\r\n\r\n" +
		"GET /v1/files/{priv} HTTP/1.1\r\nHost: a\r\n\r\n",
	"TE body smuggles a request": "GET /v1/files/{pub} HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n" +
		"2d\r\nGET /v1/files/{priv} HTTP/1.1\r\nHost: a\r\n\r\n\r\n0\r\n\r\n",
	"CL and TE":           "GET /v1/files/{pub} HTTP/1.1\r\nHost: a\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /v1/files/{priv} HTTP/1.1\r\nHost: a\r\n\r\n",
	"space before colon":  "GET /v1/files/{pub} HTTP/1.1\r\nHost: a\r\nContent-Length : 5\r\n\r\nGET /",
	"obs-fold":            "GET /v1/files/{pub} HTTP/1.1\r\nHost: a\r\nX: y\r\n Content-Length: 5\r\n\r\nGET /",
	"bare LF":             "GET /v1/files/{pub} HTTP/1.1\nHost: a\n\nGET /v1/files/{pub} HTTP/1.1\r\nHost: a\r\n\r\n",
	"bare LF only":        "GET /v1/files/{pub} HTTP/1.1\nHost: a\n\n",
	"bare LF, then more":  "GET /v1/files/{pub} HTTP/1.1\nHost: a\n\nGET /v1/files/{html} HTTP/1.1\nHost: a\n\n",
	"no Host":             "GET /v1/files/{pub} HTTP/1.1\r\n\r\n",
	"two Hosts":           "GET /v1/files/{pub} HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
	"HTTP/1.0":            "GET /v1/files/{pub} HTTP/1.0\r\n\r\n",
	"absolute form":       "GET http://a/v1/files/{pub} HTTP/1.1\r\nHost: a\r\n\r\n",
	"garbage after":       "GET /v1/files/{pub} HTTP/1.1\r\nHost: a\r\n\r\n\x00\x01garbage\r\n\r\n",
	"NUL in a value":      "GET /v1/files/{pub} HTTP/1.1\r\nHost: a\r\nX: a\x00b\r\n\r\n",
	"long head":           "GET /v1/files/{pub} HTTP/1.1\r\nHost: a\r\nX-Long: " + strings.Repeat("x", 6000) + "\r\n\r\n",
	"h2c upgrade attempt": "GET /v1/files/{pub} HTTP/1.1\r\nHost: a\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQAAP__\r\n\r\n",
}

// TestFastPathAnswersAsNetHTTP sends every stream of fastStreams to a server with the
// fast path and to one without it: the answers must be the same, byte for byte but
// for dates, timings and generated ids. So the fast path gives each request
// net/http's answer, leaves the requests it does not serve to net/http intact, and
// is never the one to read a smuggled request.
func TestFastPathAnswersAsNetHTTP(t *testing.T) {
	p := newFastPair(t)
	type answers struct{ fast, slow []string }
	got := make(map[string]*answers, len(fastStreams))
	var wg sync.WaitGroup
	for name, raw := range fastStreams { // all at once: each waits for its server's silence
		a := &answers{}
		got[name] = a
		wg.Go(func() { a.fast = p.stream(t, p.fast, raw) })
		wg.Go(func() { a.slow = p.stream(t, p.slow, raw) })
	}
	wg.Wait()
	var statuses []string
	for _, s := range got["revalidation"].fast {
		statuses = append(statuses, s[:3])
	}
	if strings.Join(statuses, ",") != "304,304,304,200,200,304" {
		t.Errorf("revalidation answers %v, want 304,304,304,200,200,304", statuses)
	}
	for name, a := range got {
		if len(a.slow) == 0 {
			t.Errorf("%s: net/http answered nothing", name)
		}
		if !slices.Equal(a.fast, a.slow) {
			t.Errorf("%s: fast path:\n%s\n\nnet/http:\n%s", name, strings.Join(a.fast, "\n--\n"), strings.Join(a.slow, "\n--\n"))
		}
	}
}

// TestFastPathServes checks that the fast path, not net/http, answered: the same
// requests as the public GET case, counted in the metrics under getFile's route.
func TestFastPathServes(t *testing.T) {
	p := newFastPair(t)
	for _, e := range []*env{p.fast, p.slow} {
		got := p.stream(t, e, strings.Repeat("GET /v1/files/{pub} HTTP/1.1\r\nHost: a\r\n\r\n", 5))
		if len(got) != 5 || !strings.HasPrefix(got[4], "200 OK") {
			t.Fatalf("%d answers: %q", len(got), got)
		}
	}
	for _, e := range []*env{p.fast, p.slow} {
		body := mustStatus(t, e.do("GET", "/metrics", nil, true), http.StatusOK, nil)
		if !bytes.Contains(body, []byte(`coffer_http_request_duration_seconds_count{method="GET",route="GET /v1/files/{id}",status="200"} 5`)) {
			t.Fatalf("metrics lack the 5 GETs:\n%s", grepLines(body, "files/{id}"))
		}
		want := "coffer_http_fast_path_requests_total 5"
		if e == p.slow {
			want = "coffer_http_fast_path_requests_total 0"
		}
		if !bytes.Contains(body, []byte(want)) {
			t.Fatalf("want %q:\n%s", want, grepLines(body, "fast_path"))
		}
	}
}

// grepLines returns the lines of b that contain s.
func grepLines(b []byte, s string) string {
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, s) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
