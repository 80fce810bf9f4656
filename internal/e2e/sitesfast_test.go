package e2e

import (
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/andybalholm/brotli"
	"github.com/coffer/coffer/internal/wiretest"
)

// fastSiteDoc is the site of TestSitesFastPath: upstream routes (one with a cache
// rule and route headers, one that overrides Content-Type, one without
// compression), a bucket route with an SPA fallback, and a header rule that sets
// Vary.
func fastSiteDoc(originURL string) string {
	return fmt.Sprintf(`{
  "id": "fast", "hosts": ["fast.test"], "notFound": "/404.html",
  "headers": [{"match": "**.js", "set": {"X-Rule": "js", "Vary": "Origin"}}],
  "routes": [
    {"path": "/media/*", "stripPrefix": "/media", "tags": ["media"], "target": {"http": {"url": %[1]q, "precompressed": true}},
     "edge": {"ttl": "1h"}, "headers": {"X-Route": "media"},
     "cacheControl": [{"match": "**.js", "value": "public, max-age=31536000, immutable"}]},
    {"path": "/typed/*", "stripPrefix": "/typed", "target": {"http": {"url": %[1]q}},
     "edge": {"ttl": "1h"}, "headers": {"Content-Type": "text/x-custom"}},
    {"path": "/raw/*", "stripPrefix": "/raw", "target": {"http": {"url": %[1]q}}, "edge": {"ttl": "1h"}, "compress": false},
    {"path": "/*", "target": {"bucket": {"id": "default", "prefix": "www/"}}, "fallback": "/index.html",
     "headers": {"X-Frame-Options": "DENY"}, "cacheControl": [{"match": "*.html", "value": "no-cache"}]}
  ]
}`, originURL)
}

// fastSiteStreams are raw request streams, one connection each, for the fast path's
// cases and the ones it leaves to net/http, mixed on a connection.
var fastSiteStreams = map[string]string{
	"upstream, identity":     "GET /media/app.js HTTP/1.1\r\nHost: fast.test\r\n\r\n",
	"upstream, br sibling":   "GET /media/app.js HTTP/1.1\r\nHost: fast.test\r\nAccept-Encoding: br, gzip\r\n\r\n",
	"upstream, gzip derived": "GET /media/app.js HTTP/1.1\r\nHost: fast.test\r\nAccept-Encoding: gzip\r\n\r\n",
	"upstream, zstd q":       "GET /media/app.js HTTP/1.1\r\nHost: fast.test\r\nAccept-Encoding: gzip;q=0.5\r\nAccept-Encoding: zstd\r\n\r\n",
	"upstream, HEAD br":      "HEAD /media/app.js HTTP/1.1\r\nHost: fast.test\r\nAccept-Encoding: br\r\n\r\n",
	"upstream, binary":       "GET /media/pic.bin HTTP/1.1\r\nHost: fast.test\r\nAccept-Encoding: br, gzip\r\n\r\n",
	"upstream, tags":         "GET /media/tagged.css HTTP/1.1\r\nHost: fast.test\r\nAccept-Encoding: gzip\r\nX-Request-Id: client-id-1\r\n\r\n",
	"upstream, small":        "GET /media/small.txt HTTP/1.1\r\nHost: fast.test\r\nAccept-Encoding: gzip\r\n\r\n",
	"type overridden":        "GET /typed/app.js HTTP/1.1\r\nHost: fast.test\r\nAccept-Encoding: gzip\r\n\r\n",
	"no compression":         "GET /raw/app.js HTTP/1.1\r\nHost: fast.test\r\nAccept-Encoding: br\r\n\r\n",
	"merged slashes":         "GET /media//app.js HTTP/1.1\r\nHost: FAST.test:80\r\n\r\n",
	"bucket, index":          "GET / HTTP/1.1\r\nHost: fast.test\r\n\r\n",
	"bucket, gzip":           "GET /assets/main.js HTTP/1.1\r\nHost: fast.test\r\nAccept-Encoding: gzip\r\n\r\n",
	"bucket, HEAD":           "HEAD /assets/main.js HTTP/1.1\r\nHost: fast.test\r\n\r\n",
	"pipelined, then a range, then fast": "GET /media/app.js HTTP/1.1\r\nHost: fast.test\r\nAccept-Encoding: br\r\n\r\n" +
		"GET /media/app.js HTTP/1.1\r\nHost: fast.test\r\nRange: bytes=10-19\r\n\r\n" +
		"GET /media/pic.bin HTTP/1.1\r\nHost: fast.test\r\n\r\n",
	"pipelined, fast three": strings.Repeat("GET /media/pic.bin HTTP/1.1\r\nHost: fast.test\r\n\r\n", 3),
	"fast, then a fallback": "GET /media/pic.bin HTTP/1.1\r\nHost: fast.test\r\n\r\nGET /app/settings HTTP/1.1\r\nHost: fast.test\r\n\r\n",
	"fast, then a 404":      "GET /media/pic.bin HTTP/1.1\r\nHost: fast.test\r\n\r\nGET /media/none.png HTTP/1.1\r\nHost: fast.test\r\n\r\n",
	"conditional":           "GET /media/app.js HTTP/1.1\r\nHost: fast.test\r\nIf-None-Match: \"x\"\r\n\r\n",
	"escaped":               "GET /media/%61pp.js HTTP/1.1\r\nHost: fast.test\r\n\r\n",
	"dot segment":           "GET /media/../media/app.js HTTP/1.1\r\nHost: fast.test\r\n\r\n",
	"query":                 "GET /media/pic.bin?v=1 HTTP/1.1\r\nHost: fast.test\r\n\r\n",
	"close ends it":         "GET /media/pic.bin HTTP/1.1\r\nHost: fast.test\r\nConnection: close\r\n\r\nGET /media/pic.bin HTTP/1.1\r\nHost: fast.test\r\n\r\n",
	"miss":                  "GET /media/cold.txt HTTP/1.1\r\nHost: fast.test\r\n\r\n",
	"API host after a site": "GET /media/pic.bin HTTP/1.1\r\nHost: fast.test\r\n\r\nGET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
}

// TestSitesFastPath: two nodes with the same site in front of one upstream, one
// with the HTTP/1.1 fast path (the default) and one without (--fast-path=false),
// their caches warmed alike, answer every stream of fastSiteStreams byte for byte
// the same but for dates, timings and generated ids; the fast node answered the
// warm requests on its fast path; both nodes' audit logs hold the same records.
func TestSitesFastPath(t *testing.T) {
	up := newOrigin(t)
	js := strings.Repeat("export const x = 1; // a line of a bundle\n", 1000)
	up.set("/app.js", js, "text/javascript", "", "")
	up.set("/app.js.br", brotliOf(js), "application/octet-stream", "", "")
	up.set("/pic.bin", strings.Repeat("\x89PNG", 5000), "image/png", "public, max-age=3600", "")
	up.set("/tagged.css", strings.Repeat("body { color: red }\n", 200), "text/css", "", "css theme")
	up.set("/small.txt", "tiny", "text/plain", "", "")
	up.set("/cold.txt", "cold", "text/plain", "", "")
	nodes := map[string]*proc{}
	for _, name := range []string{"fast", "slow"} {
		env := []string{"COFFER_DATA_DIR=" + t.TempDir(), "COFFER_WEBHOOK_ALLOW_NETWORKS=127.0.0.0/8"}
		if name == "slow" {
			env = append(env, "COFFER_FAST_PATH=false")
		}
		p := start(t, env...)
		p.uploadNamed("default", "www/index.html", "text/html; charset=utf-8", "<h1>home</h1>", nil)
		p.uploadNamed("default", "www/assets/main.js", "text/javascript", js, map[string]any{"tags": []string{"bundle"}})
		p.createSite(fastSiteDoc(up.URL()))
		nodes[name] = p
	}
	// Warm both caches alike: every upstream object and its compressed copies, until
	// they are HITs with a known size (a derived copy's first readers stream it).
	for _, p := range nodes {
		for _, path := range []string{"/media/app.js", "/media/pic.bin", "/media/tagged.css", "/media/small.txt", "/typed/app.js", "/raw/app.js", "/assets/main.js"} {
			for _, ae := range []string{"identity", "br, gzip", "gzip", "zstd"} {
				until(t, "a warm "+path+" ("+ae+")", func() bool {
					r := p.siteGet("fast.test", path, "Accept-Encoding", ae)
					return r.status == 200 && r.h.Get("Content-Length") != "" && (r.h.Get("X-Cache") == "HIT" || r.h.Get("X-Cache") == "BYPASS")
				})
			}
		}
		p.siteGet("fast.test", "/media/none.png") // a negative entry
	}
	before := fastPathCount(t, nodes["fast"])
	time.Sleep(5 * time.Millisecond)
	mark := time.Now()

	type answers struct{ fast, slow []string }
	got := map[string]*answers{}
	var wg sync.WaitGroup
	for name, raw := range fastSiteStreams {
		a := &answers{}
		got[name] = a
		wg.Go(func() {
			a.fast = wiretest.Exchange(t, strings.TrimPrefix(nodes["fast"].url, "http://"), raw, siteAnswer)
		})
		wg.Go(func() {
			a.slow = wiretest.Exchange(t, strings.TrimPrefix(nodes["slow"].url, "http://"), raw, siteAnswer)
		})
	}
	wg.Wait()
	for name, a := range got {
		if len(a.slow) == 0 {
			t.Errorf("%s: net/http answered nothing", name)
		}
		if !slices.Equal(a.fast, a.slow) {
			t.Errorf("%s: fast path:\n%s\n\nnet/http:\n%s", name, strings.Join(a.fast, "\n--\n"), strings.Join(a.slow, "\n--\n"))
		}
	}
	if t.Failed() {
		return
	}
	t.Logf("br answer on the fast path:\n%s", got["upstream, br sibling"].fast[0])

	// The fast node answered the warm GETs and HEADs itself: 14 single ones, and the
	// first of most mixed streams (the rest of each went to net/http).
	served := fastPathCount(t, nodes["fast"]) - before
	if want := 14 + 1 + 3 + 1 + 1 + 1 + 1 + 1; served != want {
		t.Errorf("the fast path answered %d requests, want %d", served, want)
	}
	if n := fastPathCount(t, nodes["slow"]); n != 0 {
		t.Errorf("the node without the fast path answered %d on it", n)
	}

	// Both audit logs hold the same records of the streams' requests.
	var logs [2][]string
	streamed := 0
	for _, raw := range fastSiteStreams {
		streamed += strings.Count(raw, "Host: fast.test") + strings.Count(raw, "Host: FAST.test")
	}
	streamed-- // the request after Connection: close is never read
	for i, p := range []*proc{nodes["fast"], nodes["slow"]} {
		var rows []auditRow
		until(t, "the audit records", func() bool {
			rows = rows[:0]
			for _, r := range p.auditQuery("--site", "fast", "--since", "1h", "--limit", "10000") {
				if !r.Time.Before(mark) {
					rows = append(rows, r)
				}
			}
			return len(rows) >= streamed
		})
		for _, r := range rows {
			logs[i] = append(logs[i], fmt.Sprintf("%s %s %s %d %d %s %s %s", r.Method, r.Host, r.Path, r.Status, r.Bytes, r.Cache, r.Target, r.Client))
		}
		slices.Sort(logs[i])
	}
	if !slices.Equal(logs[0], logs[1]) {
		t.Errorf("audit records differ:\nfast %d: %v\nslow %d: %v", len(logs[0]), logs[0], len(logs[1]), logs[1])
	}
	t.Logf("%d fast-path answers; %d audit records on each node, the same", served, len(logs[0]))
}

// fastPathCount is coffer_http_fast_path_requests_total on p.
func fastPathCount(t *testing.T, p *proc) int {
	t.Helper()
	n := p.metric("coffer_http_fast_path_requests_total")
	if n < 0 {
		t.Fatal("no coffer_http_fast_path_requests_total in /metrics")
	}
	return int(n)
}

// brotliOf is s compressed with brotli.
func brotliOf(s string) string {
	var b strings.Builder
	w := brotli.NewWriterLevel(&b, 5)
	io.WriteString(w, s)
	w.Close()
	return b.String()
}

// siteAnswer renders resp without what differs between two nodes with the same
// data: Date, a bucket file's Last-Modified, Server-Timing, generated request ids.
func siteAnswer(resp *http.Response) string {
	return wiretest.Render(resp, func(k string, vs []string) (string, bool) {
		switch v := strings.Join(vs, "|"); {
		case k == "Date" || k == "Server-Timing" || k == "Last-Modified" && resp.Header.Get("X-Cache") == "BYPASS":
			return fmt.Sprintf("(%d)", len(vs)), true
		case k == "X-Request-Id" && v != "client-id-1":
			return "(generated)", true
		default:
			return v, true
		}
	})
}
