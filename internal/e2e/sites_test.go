package e2e

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/zstd"
)

// siteClient fetches from sites: no transparent decompression (bodies are counted
// and checked as sent), no redirects followed.
var siteClient = &http.Client{
	Transport:     &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 600},
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	Timeout:       60 * time.Second,
}

// siteResp is one answer of a site: status, headers and the body as sent.
type siteResp struct {
	status int
	h      http.Header
	body   []byte
	err    error // reading the body failed (the connection was cut)
}

// get requests path from p with Host host and headers hdr (name, value, ...).
func (p *proc) siteGet(host, path string, hdr ...string) siteResp {
	p.t.Helper()
	return p.siteDo("GET", host, path, hdr...)
}

// siteDo is siteGet with a method.
func (p *proc) siteDo(method, host, path string, hdr ...string) siteResp {
	p.t.Helper()
	req, err := http.NewRequest(method, p.url+path, nil)
	if err != nil {
		p.t.Fatal(err)
	}
	if strings.Contains(path, "%") || strings.Contains(path, "..") {
		req.URL.Opaque = path // sent as written, not cleaned
	}
	req.Host = host
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := siteClient.Do(req)
	if err != nil {
		return siteResp{err: err}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return siteResp{status: resp.StatusCode, h: resp.Header, body: body, err: err}
}

// uploadNamed uploads body into bucket under name (which may hold "/"), with
// metadata md (nil: none), and returns the file id.
func (p *proc) uploadNamed(bucket, name, ctype, body string, md map[string]any) string {
	p.t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	mw.WriteField("bucket-id", bucket)
	meta, _ := json.Marshal(map[string]any{"name": name, "metadata": md})
	mw.WriteField("metadata[]", string(meta))
	h := textproto.MIMEHeader{"Content-Disposition": {`form-data; name="file[]"; filename="f"`}, "Content-Type": {ctype}}
	w, _ := mw.CreatePart(h)
	io.WriteString(w, body)
	mw.Close()
	resp, err := p.request(context.Background(), "POST", "/v1/files", &buf, "Content-Type", mw.FormDataContentType())
	if err != nil {
		p.t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct{ ProcessedFiles []fileMeta }
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != 201 || len(out.ProcessedFiles) != 1 {
		p.t.Fatalf("upload %s: %d %v", name, resp.StatusCode, err)
	}
	if out.ProcessedFiles[0].Name != name {
		p.t.Fatalf("upload %s: named %q", name, out.ProcessedFiles[0].Name)
	}
	return out.ProcessedFiles[0].ID
}

// replaceNamed replaces file id's contents, keeping its name.
func (p *proc) replaceNamed(id, name, ctype, body string) {
	p.t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	meta, _ := json.Marshal(map[string]string{"name": name})
	mw.WriteField("metadata", string(meta))
	h := textproto.MIMEHeader{"Content-Disposition": {`form-data; name="file"; filename="f"`}, "Content-Type": {ctype}}
	w, _ := mw.CreatePart(h)
	io.WriteString(w, body)
	mw.Close()
	if s := p.status("PUT", "/v1/files/"+id, &buf, "Content-Type", mw.FormDataContentType()); s != 200 {
		p.t.Fatalf("replace %s: %d", id, s)
	}
}

// createSite stores the site document doc through `coffer admin sites create`.
func (p *proc) createSite(doc string) {
	p.t.Helper()
	f := filepath.Join(p.t.TempDir(), "site.json")
	if err := os.WriteFile(f, []byte(doc), 0o600); err != nil {
		p.t.Fatal(err)
	}
	p.mustAdmin(nil, "sites", "create", "--file", f)
}

// appJS is a compressible script of about 40 KB.
var appJS = strings.Repeat("export function hello(name) { return `hello, ${name}!`; }\n", 700)

// siteDoc is the test site: bucket content under www/, an upstream under /media/,
// a redirect, headers and cache rules.
func siteDoc(host, originURL string) string {
	return fmt.Sprintf(`{
  "id": "www",
  "hosts": [%q],
  "notFound": "/404.html",
  "routes": [
    {"path": "/old/*", "target": {"redirect": {"to": "/new/:splat", "status": 301}}},
    {"path": "/media/*", "stripPrefix": "/media", "tags": ["media"],
     "target": {"http": {"url": %q}},
     "edge": {"ttl": "1s", "staleWhileRevalidate": "0.001s", "staleIfError": "1h"}},
    {"path": "/*", "target": {"bucket": {"id": "default", "prefix": "www/"}}, "fallback": "/index.html",
     "headers": {"X-Frame-Options": "DENY"},
     "cacheControl": [{"match": "*.html", "value": "no-cache"},
                      {"match": "/assets/**", "value": "public, max-age=31536000, immutable"}]}
  ]
}`, host, originURL)
}

// TestSites: a site on the built binary serves a bucket at clean URLs and an
// upstream through the edge cache, as its routes say.
func TestSites(t *testing.T) {
	up := newOrigin(t)
	dataDir := t.TempDir()
	p := start(t, "COFFER_DATA_DIR="+dataDir, "COFFER_WEBHOOK_ALLOW_NETWORKS=127.0.0.0/8",
		"COFFER_EDGE_CACHE_SIZE="+fmt.Sprint(4<<20), "COFFER_EDGE_MAX_OBJECT="+fmt.Sprint(1<<20))
	ids := map[string]string{}
	for name, body := range map[string]string{
		"www/index.html": "<h1>home</h1>", "www/about/index.html": "<h1>about</h1>",
		"www/404.html": "<h1>lost</h1>", "www/assets/app.js": appJS,
	} {
		ctype := "text/html; charset=utf-8"
		if strings.HasSuffix(name, ".js") {
			ctype = "text/javascript"
		}
		ids[name] = p.uploadNamed("default", name, ctype, body, map[string]any{"tags": []string{"bundle"}})
	}
	p.createSite(siteDoc("site.test", up.URL()))
	const host = "site.test"

	t.Run("routes", func(t *testing.T) {
		for _, c := range []struct {
			path, want, cacheControl string
			status                   int
		}{
			{"/", "<h1>home</h1>", "no-cache", 200},
			{"/index.html", "<h1>home</h1>", "no-cache", 200},
			{"/about/", "<h1>about</h1>", "no-cache", 200},
			{"/dashboard/settings", "<h1>home</h1>", "no-cache", 200}, // SPA fallback
			{"/missing.png", "<h1>lost</h1>", "", 404},                // an asset: the custom 404 page
			{"/assets/app.js", appJS, "public, max-age=31536000, immutable", 200},
		} {
			r := p.siteGet(host, c.path)
			if r.status != c.status || string(r.body) != c.want {
				t.Errorf("GET %s: %d %.40q, want %d %.40q", c.path, r.status, r.body, c.status, c.want)
			}
			if c.status == 200 && (r.h.Get("Cache-Control") != c.cacheControl || r.h.Get("X-Frame-Options") != "DENY") {
				t.Errorf("GET %s: Cache-Control %q X-Frame-Options %q", c.path, r.h.Get("Cache-Control"), r.h.Get("X-Frame-Options"))
			}
		}
		if r := p.siteGet(host, "/assets/app.js"); !strings.Contains(r.h.Get("Surrogate-Key"), "bundle") {
			t.Errorf("Surrogate-Key %q lacks the file's metadata tag", r.h.Get("Surrogate-Key"))
		}
		r := p.siteGet(host, "/old/a/b?x=1")
		if r.status != 301 || r.h.Get("Location") != "/new/a/b?x=1" {
			t.Errorf("redirect: %d %q", r.status, r.h.Get("Location"))
		}
		if r := p.siteDo("HEAD", host, "/"); r.status != 200 || len(r.body) != 0 {
			t.Errorf("HEAD /: %d, %d bytes", r.status, len(r.body))
		}
		if r := p.siteDo("POST", host, "/"); r.status != 405 {
			t.Errorf("POST /: %d", r.status)
		}
		// The API is still the API on its own host.
		if s := p.status("GET", "/v1/files/"+ids["www/index.html"], nil); s != 200 {
			t.Errorf("the API by its own host: %d", s)
		}
	})

	t.Run("compression", func(t *testing.T) { checkCompression(t, p, host) })
	t.Run("upstream", func(t *testing.T) { checkUpstream(t, p, up, host) })
	t.Run("coalescing", func(t *testing.T) { checkCoalescing(t, p, up, host) })
	t.Run("bad input", func(t *testing.T) { checkSiteBadInput(t, p, up, host, filepath.Join(dataDir, "edge")) })
	t.Run("purge on replace", func(t *testing.T) {
		if r := p.siteGet(host, "/"); string(r.body) != "<h1>home</h1>" {
			t.Fatalf("before: %q", r.body)
		}
		p.replaceNamed(ids["www/index.html"], "www/index.html", "text/html", "<h1>home, v2</h1>")
		if r := p.siteGet(host, "/"); string(r.body) != "<h1>home, v2</h1>" {
			t.Fatalf("after a replace: %q", r.body)
		}
		if r := p.siteGet(host, "/new.html"); r.status != 404 {
			t.Fatalf("a missing page: %d", r.status)
		}
		p.uploadNamed("default", "www/new.html", "text/html", "<h1>new</h1>", nil)
		if r := p.siteGet(host, "/new.html"); r.status != 200 || string(r.body) != "<h1>new</h1>" {
			t.Fatalf("a new file where a 404 was: %d %q", r.status, r.body)
		}
	})
	t.Run("audit", func(t *testing.T) { checkAudit(t, p) })
	t.Run("stale if error", func(t *testing.T) {
		up.set("/stale.txt", "still here", "text/plain", "", "")
		if r := p.siteGet(host, "/media/stale.txt"); r.status != 200 || r.h.Get("X-Cache") != "MISS" {
			t.Fatalf("first: %d %q", r.status, r.h.Get("X-Cache"))
		}
		time.Sleep(1200 * time.Millisecond) // past the 1 s TTL
		up.stop()
		r := p.siteGet(host, "/media/stale.txt")
		if r.status != 200 || string(r.body) != "still here" || r.h.Get("X-Cache") != "STALE" {
			t.Fatalf("with the upstream down: %d %q %q", r.status, r.body, r.h.Get("X-Cache"))
		}
		if r := p.siteGet(host, "/media/never-fetched.txt"); r.status != 502 && r.status != 504 {
			t.Fatalf("a miss with the upstream down: %d", r.status)
		}
	})
}

// checkCompression: encodings chosen from Accept-Encoding, with Vary; none for a
// range; each decodes to the file.
func checkCompression(t *testing.T, p *proc, host string) {
	decoders := map[string]func([]byte) ([]byte, error){
		"br": func(b []byte) ([]byte, error) { return io.ReadAll(brotli.NewReader(bytes.NewReader(b))) },
		"gzip": func(b []byte) ([]byte, error) {
			zr, err := gzip.NewReader(bytes.NewReader(b))
			if err != nil {
				return nil, err
			}
			return io.ReadAll(zr)
		},
		"zstd": func(b []byte) ([]byte, error) {
			zr, err := zstd.NewReader(bytes.NewReader(b))
			if err != nil {
				return nil, err
			}
			defer zr.Close()
			return io.ReadAll(zr)
		},
	}
	for _, c := range []struct{ accept, want string }{
		{"br, gzip, zstd", "br"}, {"gzip", "gzip"}, {"zstd, gzip;q=0.5", "zstd"}, {"gzip;q=0.2, br;q=0.9", "br"},
		{"identity", ""}, {"", ""}, {"br;q=0, gzip;q=0", ""},
	} {
		r := p.siteGet(host, "/assets/app.js", "Accept-Encoding", c.accept)
		if r.status != 200 || r.h.Get("Content-Encoding") != c.want || !strings.Contains(r.h.Get("Vary"), "Accept-Encoding") {
			t.Errorf("Accept-Encoding %q: %d Content-Encoding %q Vary %q", c.accept, r.status, r.h.Get("Content-Encoding"), r.h.Get("Vary"))
			continue
		}
		body := r.body
		if c.want != "" {
			var err error
			if body, err = decoders[c.want](r.body); err != nil {
				t.Errorf("%s: %v", c.want, err)
			}
			if len(r.body) >= len(appJS)/2 {
				t.Errorf("%s: %d bytes of %d", c.want, len(r.body), len(appJS))
			}
		}
		if string(body) != appJS {
			t.Errorf("Accept-Encoding %q: the body is not the file", c.accept)
		}
	}
	r := p.siteGet(host, "/assets/app.js", "Accept-Encoding", "br", "Range", "bytes=0-9")
	if r.status != 206 || r.h.Get("Content-Encoding") != "" || string(r.body) != appJS[:10] {
		t.Errorf("a range: %d %q %q", r.status, r.h.Get("Content-Encoding"), r.body)
	}
}

// checkUpstream: an upstream object is fetched once, then served from the cache;
// revalidated once stale; a missing one is remembered.
func checkUpstream(t *testing.T, p *proc, up *origin, host string) {
	up.set("/pic.bin", strings.Repeat("p", 200<<10), "application/octet-stream", "", "hero")
	first := p.siteGet(host, "/media/pic.bin")
	if first.status != 200 || len(first.body) != 200<<10 || first.h.Get("X-Cache") != "MISS" {
		t.Fatalf("first: %d %d %q", first.status, len(first.body), first.h.Get("X-Cache"))
	}
	until(t, "the fill committed", func() bool { return p.siteGet(host, "/media/pic.bin").h.Get("X-Cache") == "HIT" })
	for range 5 {
		if r := p.siteGet(host, "/media/pic.bin"); r.h.Get("X-Cache") != "HIT" || len(r.body) != 200<<10 {
			t.Fatalf("again: %q %d", r.h.Get("X-Cache"), len(r.body))
		}
	}
	if n := up.count("/pic.bin"); n != 1 {
		t.Fatalf("upstream asked %d times, want 1", n)
	}
	if r := p.siteGet(host, "/media/pic.bin", "Range", "bytes=100-199"); r.status != 206 || len(r.body) != 100 {
		t.Fatalf("range of a cached object: %d %d", r.status, len(r.body))
	}
	time.Sleep(1100 * time.Millisecond) // stale: revalidated with If-None-Match, 304
	if r := p.siteGet(host, "/media/pic.bin"); r.h.Get("X-Cache") != "REVALIDATED" || len(r.body) != 200<<10 {
		t.Fatalf("stale: %q %d", r.h.Get("X-Cache"), len(r.body))
	}
	for range 3 {
		if r := p.siteGet(host, "/media/nothing.bin"); r.status != 404 {
			t.Fatalf("missing upstream object: %d", r.status)
		}
	}
	if n := up.count("/nothing.bin"); n != 1 {
		t.Fatalf("a missing object asked %d times, want 1 (negative cache)", n)
	}
}

// checkCoalescing: 500 concurrent misses for one object make one upstream request,
// and every client gets the whole object.
func checkCoalescing(t *testing.T, p *proc, up *origin, host string) {
	body := strings.Repeat("c", 300<<10)
	up.set("/herd.bin", body, "application/octet-stream", "", "")
	var wg sync.WaitGroup
	errs := make(chan string, 500)
	for range 500 {
		wg.Go(func() {
			r := p.siteGet(host, "/media/slow/herd.bin")
			if r.err != nil || r.status != 200 || string(r.body) != body {
				errs <- fmt.Sprintf("%d %d %v", r.status, len(r.body), r.err)
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Errorf("a client of the herd: %s", e)
	}
	if n := up.count("/slow/herd.bin"); n != 1 {
		t.Fatalf("500 concurrent misses made %d upstream requests, want 1", n)
	}
	t.Logf("500 concurrent misses: %d upstream request", up.count("/slow/herd.bin"))
}

// dirSize returns the bytes of the files under dir.
func dirSize(t *testing.T, dir string) int64 {
	var n int64
	filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			n += fi.Size()
		}
		return nil
	})
	return n
}

// checkSiteBadInput: hostile paths and ranges, and upstreams that lie or never end,
// are answered cleanly; nothing truncated is cached; the disk bound holds.
func checkSiteBadInput(t *testing.T, p *proc, up *origin, host, edgeDir string) {
	for _, path := range []string{"/../etc/passwd", "/%2e%2e/etc/passwd", "/assets/..%2fapp.js", "/a%00b",
		"/a%5c..%5cb", "/media/%2e%2e/secret", "/" + strings.Repeat("a", 5000)} {
		if r := p.siteGet(host, path); r.status != 400 && r.status != 404 {
			t.Errorf("GET %q: %d, want 400 (or 404)", path, r.status)
		}
	}
	for _, h := range []string{"SITE.TEST", "site.test.", "site.test:80"} {
		if r := p.siteGet(h, "/"); r.status != 200 || !strings.Contains(string(r.body), "home") {
			t.Errorf("Host %q: %d", h, r.status)
		}
	}
	for _, h := range []string{"site.test..", "xn--ste-6na.test", "site.test@evil.test"} {
		if r := p.siteGet(h, "/"); r.status == 200 && strings.Contains(string(r.body), "home") || r.status >= 500 {
			t.Errorf("Host %q reached the site or failed: %d", h, r.status)
		}
	}
	up.set("/r.bin", strings.Repeat("r", 10000), "application/octet-stream", "", "")
	p.siteGet(host, "/media/r.bin")
	for _, rg := range []string{"bytes=999999-", "bytes=5-2", "bytes=-0", "bytes=" + strings.Repeat("1-2,", 300) + "3-4", "chars=0-1"} {
		if r := p.siteGet(host, "/media/r.bin", "Range", rg); r.status >= 500 || (r.status == 206 && len(r.body) > 10000) {
			t.Errorf("Range %.30q: %d", rg, r.status)
		}
	}
	// A short body: the client sees the cut, and the next request asks again.
	for i := 1; i <= 2; i++ {
		r := p.siteGet(host, "/media/short/x")
		if r.err == nil && r.status == 200 && len(r.body) == 4096 {
			t.Fatalf("a truncated upstream body was served whole")
		}
		if n := up.count("/short/x"); n != i {
			t.Fatalf("short body: upstream asked %d times after %d requests (a truncated object was cached)", n, i)
		}
	}
	// A body without end, and a 10 GB one: read 8 MB of each, then hang up.
	for _, path := range []string{"/media/endless/x", "/media/huge/x"} {
		req, _ := http.NewRequest("GET", p.url+path, nil)
		req.Host = host
		resp, err := siteClient.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		n, _ := io.CopyN(io.Discard, resp.Body, 8<<20)
		resp.Body.Close()
		t.Logf("%s: %d %d bytes read, X-Cache %q", path, resp.StatusCode, n, resp.Header.Get("X-Cache"))
	}
	// Churn past the bound: 12 objects of 512 KiB in a 4 MiB cache.
	for i := range 12 {
		up.set(fmt.Sprintf("/churn/%d", i), strings.Repeat("z", 512<<10), "application/octet-stream", "", "")
		if r := p.siteGet(host, fmt.Sprintf("/media/churn/%d", i)); r.status != 200 || len(r.body) != 512<<10 {
			t.Fatalf("churn %d: %d %d", i, r.status, len(r.body))
		}
	}
	if n := dirSize(t, edgeDir); n > 4<<20+64<<10 { // the bound, plus the entries' small sidecars
		t.Fatalf("edge cache holds %d bytes on disk, bound %d", n, 4<<20)
	}
	if r := p.siteGet(host, "/"); r.status != 200 {
		t.Fatalf("after the bad input: %d", r.status)
	}
}

// checkAudit: every request to a site is one audit record, with the bytes sent.
func checkAudit(t *testing.T, p *proc) {
	p.uploadNamed("default", "docs/index.html", "text/html", strings.Repeat("<p>docs</p>", 300), nil)
	p.uploadNamed("default", "docs/guide.txt", "text/plain", strings.Repeat("guide ", 500), nil)
	p.createSite(`{"id": "docs", "hosts": ["audit.test"], "routes": [{"path": "/*", "target": {"bucket": {"id": "default", "prefix": "docs/"}}}]}`)
	var requests, bytesSent int
	for i := range 40 {
		path := []string{"/", "/guide.txt", "/nope.txt", "/guide.txt"}[i%4]
		hdr := []string{}
		if i%3 == 0 {
			hdr = []string{"Accept-Encoding", "gzip"}
		}
		r := p.siteGet("audit.test", path, hdr...)
		if r.err != nil {
			t.Fatal(r.err)
		}
		requests++
		bytesSent += len(r.body)
	}
	var got []auditRow
	until(t, "the audit records", func() bool {
		got = p.auditQuery("--site", "docs", "--since", "1h", "--limit", "1000")
		return len(got) >= requests
	})
	total := 0
	for _, r := range got {
		total += int(r.Bytes)
	}
	if len(got) != requests || total != bytesSent {
		t.Fatalf("audit: %d records, %d bytes; the client made %d requests and got %d bytes", len(got), total, requests, bytesSent)
	}
	t.Logf("audit: %d records, %d bytes, as the client counted", len(got), total)
	if got := p.auditQuery("--site", "docs", "--path", "/guide.txt", "--since", "1h"); len(got) != requests/2 {
		t.Fatalf("audit query by path: %d records, want %d", len(got), requests/2)
	}
}

// auditRow is a record as `coffer admin audit query` prints it.
type auditRow struct {
	Time   time.Time `json:"time"`
	Host   string    `json:"host"`
	Method string    `json:"method"`
	Target string    `json:"target"`
	Client string    `json:"client"`
	Site   string    `json:"site"`
	Path   string    `json:"path"`
	Status int       `json:"status"`
	Bytes  int64     `json:"bytes"`
	Cache  string    `json:"cache"`
}

// auditQuery runs `coffer admin audit query args...` and returns the records.
func (p *proc) auditQuery(args ...string) []auditRow {
	p.t.Helper()
	out, errOut, code := p.admin(append([]string{"audit", "query"}, args...)...)
	var res struct{ Records []auditRow }
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil {
		p.t.Fatalf("audit query %v: exit %d %s %s", args, code, out, errOut)
	}
	return res.Records
}

// TestSitesAcrossNodes: two nodes on one PostgreSQL; a site's upstream objects
// cached on node B are purged through node A by path, prefix and tag, and a file
// replaced through A is served new by B; an S3 origin with its own credentials is
// served; purges reach the site's purge webhook, signed.
func TestSitesAcrossNodes(t *testing.T) {
	env := append(scaleEnv(t), "COFFER_WEBHOOK_ALLOW_NETWORKS=127.0.0.0/8", "COFFER_TENANT_KEY="+randomKey())
	a, b := start(t, append(env, "COFFER_DATA_DIR="+t.TempDir())...), start(t, append(env, "COFFER_DATA_DIR="+t.TempDir())...)
	up := newOrigin(t)
	hooks := newHookSink(t)
	s3Bucket := s3Origin(t, map[string]string{"brand/logo.svg": "<svg>logo</svg>"})
	fileID := a.uploadNamed("default", "www/index.html", "text/html", "<h1>v1</h1>", nil)
	a.createSite(fmt.Sprintf(`{"id": "www", "hosts": ["nodes.test"],
  "purgeWebhooks": [{"url": %q, "secret": "purge-hook-secret-0123456789"}],
  "routes": [
    {"path": "/media/*", "stripPrefix": "/media", "target": {"http": {"url": %q}}, "edge": {"ttl": "1h"}},
    {"path": "/s3/*", "stripPrefix": "/s3", "target": {"s3": {"endpoint": %q, "bucket": %q, "accessKeyId": %q,
      "secretAccessKey": %q, "pathStyle": true, "region": "us-east-1"}}},
    {"path": "/*", "target": {"bucket": {"id": "default", "prefix": "www/"}}}]}`,
		hooks.srv.URL, up.URL(), os.Getenv("COFFER_TEST_S3_ENDPOINT"), s3Bucket,
		os.Getenv("COFFER_TEST_S3_ACCESS_KEY"), os.Getenv("COFFER_TEST_S3_SECRET_KEY")))
	const host = "nodes.test"
	until(t, "node B serves the site", func() bool { return b.siteGet(host, "/").status == 200 })
	if r := b.siteGet(host, "/s3/brand/logo.svg"); r.status != 200 || string(r.body) != "<svg>logo</svg>" {
		t.Fatalf("S3 origin: %d %q", r.status, r.body)
	}

	cached := func(path, body string) { // cached on B (once its fill has committed), then changed upstream
		up.set(strings.TrimPrefix(path, "/media"), body+" v1", "text/plain", "", "tagged")
		until(t, path+" cached on B", func() bool {
			r := b.siteGet(host, path)
			return r.h.Get("X-Cache") == "HIT" && string(r.body) == body+" v1"
		})
		up.set(strings.TrimPrefix(path, "/media"), body+" v2", "text/plain", "", "tagged")
	}
	newOnB := func(path, body string) time.Duration {
		return until(t, path+" new on B", func() bool { return string(b.siteGet(host, path).body) == body+" v2" })
	}
	cached("/media/a.txt", "a")
	a.mustAdmin(nil, "sites", "purge", "www", "--path", "/media/a.txt")
	t.Logf("purge by path seen on B after %v", newOnB("/media/a.txt", "a"))
	cached("/media/dir/1", "one")
	cached("/media/dir/2", "two")
	a.mustAdmin(nil, "sites", "purge", "www", "--prefix", "/media/dir/")
	t.Logf("purge by prefix seen on B after %v, %v", newOnB("/media/dir/1", "one"), newOnB("/media/dir/2", "two"))
	cached("/media/t.txt", "t")
	a.mustAdmin(nil, "sites", "purge", "www", "--tag", "tagged")
	t.Logf("purge by tag seen on B after %v", newOnB("/media/t.txt", "t"))

	if r := b.siteGet(host, "/"); string(r.body) != "<h1>v1</h1>" {
		t.Fatalf("B before the replace: %q", r.body)
	}
	a.replaceNamed(fileID, "www/index.html", "text/html", "<h1>v2</h1>")
	t.Logf("a replaced file seen on B after %v", until(t, "the replaced page on B", func() bool {
		return string(b.siteGet(host, "/").body) == "<h1>v2</h1>"
	}))
	hooks.wait(t, "/media/a.txt")
}

// randomKey returns 32 random bytes in base64 (a --tenant-key).
func randomKey() string {
	key := make([]byte, 32)
	rand.Read(key)
	return base64.StdEncoding.EncodeToString(key)
}
