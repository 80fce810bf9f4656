package site

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/coffer/coffer"
)

// contentDoc serves bucket "up" (files users may upload) at /u/, the same bucket
// trusted at /t/, and an HTTP origin at /o/ without and at /p/ with precompressed
// siblings.
const contentDoc = `{"id":"c","hosts":["c.test"],"routes":[
 {"path":"/u/*","stripPrefix":"/u","target":{"bucket":{"id":"up"}}},
 {"path":"/t/*","stripPrefix":"/t","target":{"bucket":{"id":"up","trusted":true}}},
 {"path":"/typed/*","stripPrefix":"/typed","target":{"bucket":{"id":"up"}},"headers":{"Content-Type":"text/html"}},
 {"path":"/o/*","stripPrefix":"/o","target":{"http":{"url":"http://spa.test/"}}},
 {"path":"/p/*","stripPrefix":"/p","target":{"http":{"url":"http://pre.test/","precompressed":true}}}]}`

// serveContent serves contentDoc over files (bucket "up", keyed by name) and
// upstream objects (by "<origin id>|<key>").
func serveContent(t *testing.T, files map[string]memFile, upstream map[string]memFile) *harness {
	t.Helper()
	c := compileDoc(t, contentDoc)
	bk := map[string]memFile{}
	for k, f := range files {
		bk["up/"+k] = f
	}
	x := &harness{buckets: &memBuckets{files: bk}, edge: &memEdge{objects: upstream}}
	x.h = NewHandler(HandlerConfig{Edge: x.edge, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	x.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		x.h.Serve(w, r, Request{Tenant: "t1", Site: c, Buckets: x.buckets, RequestID: "rid"})
	}))
	t.Cleanup(x.srv.Close)
	return x
}

// page is a compressible HTML page above the compression threshold.
var page = bytes.Repeat([]byte("<p>the admin's page</p>\n"), 100)

// TestSiblingWriters: a precompressed sibling answers for a bucket file only when
// nobody but the admin writes the bucket, the route trusts it, or the same user
// uploaded both; else the compressed answer is made from the page itself.
func TestSiblingWriters(t *testing.T) {
	evil := brotliOf([]byte("<script>alert('sibling')</script>"))
	for _, c := range []struct {
		name                  string
		shared                bool
		pageBy, sibBy, prefix string
		sibling               bool // the sibling's bytes answer
	}{
		{"admin-only bucket", false, "", "", "/u", true},
		{"user's sibling of the admin's page", true, "", "mallory", "/u", false},
		{"unknown uploaders", true, "", "", "/u", false},
		{"another user's page", true, "alice", "mallory", "/u", false},
		{"the page's own uploader", true, "alice", "alice", "/u", true},
		{"trusted bucket", true, "", "mallory", "/t", true},
	} {
		x := serveContent(t, map[string]memFile{
			"p.html":    {data: page, typ: "text/html", etag: `"page"`, shared: c.shared, uploader: c.pageBy},
			"p.html.br": {data: evil, typ: "application/x-brotli", etag: `"sib"`, shared: c.shared, uploader: c.sibBy},
		}, nil)
		resp, body := x.do(t, "GET", c.prefix+"/p.html", "Accept-Encoding: br")
		if resp.Header.Get("Content-Encoding") != "br" {
			t.Errorf("%s: Content-Encoding %q, want br", c.name, resp.Header.Get("Content-Encoding"))
			continue
		}
		got := decode(t, "br", body)
		if used := !bytes.Equal(got, page); used != c.sibling {
			t.Errorf("%s: sibling answered %v, want %v (body %.40q, etag %s)", c.name, used, c.sibling, got, resp.Header.Get("Etag"))
		}
	}
}

// TestSiblingHTTPOrigin: an HTTP origin's answer for "p.html.br" is used only when
// the origin says it holds precompressed siblings; an origin answering 200 with
// its SPA shell for any path otherwise has it served as the compressed page.
func TestSiblingHTTPOrigin(t *testing.T) {
	shell := memFile{data: []byte("<html>spa shell</html>"), typ: "text/html", etag: `"shell"`}
	pre := brotliOf(page)
	x := serveContent(t, nil, map[string]memFile{
		"http:http://spa.test/|p.html":    {data: page, typ: "text/html", etag: `"page"`},
		"http:http://spa.test/|p.html.br": shell, // the SPA's fallback, for any path
		"http:http://pre.test/|p.html":    {data: page, typ: "text/html", etag: `"page"`},
		"http:http://pre.test/|p.html.br": {data: pre, typ: "application/octet-stream", etag: `"pre"`},
	})
	resp, body := x.do(t, "GET", "/o/p.html", "Accept-Encoding: br")
	if resp.Header.Get("Etag") != `"page-br"` || !bytes.Equal(decode(t, "br", body), page) {
		t.Errorf("origin without siblings: etag %s, want the page made into br", resp.Header.Get("Etag"))
	}
	for _, g := range x.edge.gets {
		if strings.HasSuffix(g.Key, ".br") && strings.HasPrefix(g.Path, "/o/") {
			t.Errorf("asked the origin without siblings for %s", g.Key)
		}
	}
	resp, body = x.do(t, "GET", "/p/p.html", "Accept-Encoding: br")
	if resp.Header.Get("Etag") != `"pre-br"` || !bytes.Equal(body, pre) {
		t.Errorf("precompressed origin: etag %s, %d bytes, want its sibling", resp.Header.Get("Etag"), len(body))
	}
}

// TestActiveContent: a file of a bucket users may write is served with /v1's
// sandbox when its type (as sent) is not passive, unless the route trusts the
// bucket; an admin-only bucket's files are served as they are.
func TestActiveContent(t *testing.T) {
	files := map[string]memFile{}
	active := map[string]string{"x.html": "text/html; charset=utf-8", "x.svg": "image/svg+xml", "x.xml": "application/xml",
		"x.js": "text/javascript", "x.xhtml": "application/xhtml+xml", "x.pdf": "application/pdf", "x.bin": "application/x-unknown"}
	passive := map[string]string{"x.png": "image/png", "x.txt": "text/plain", "x.json": "application/json", "x.mp4": "video/mp4"}
	for _, set := range []map[string]string{active, passive} {
		for name, typ := range set {
			files[name] = memFile{data: []byte("<svg onload=alert(1)>"), typ: typ, etag: `"e"`, shared: true, uploader: "mallory"}
			files["admin/"+name] = memFile{data: []byte("<b>admin</b>"), typ: typ, etag: `"a"`}
		}
	}
	x := serveContent(t, files, nil)
	check := func(path string, want bool) {
		t.Helper()
		resp, _ := x.do(t, "GET", path)
		csp := resp.Header.Values("Content-Security-Policy")
		if got := len(csp) == 1 && csp[0] == coffer.SandboxCSP; resp.StatusCode != 200 || got != want {
			t.Errorf("GET %s: %d, Content-Security-Policy %q, want sandbox %v", path, resp.StatusCode, csp, want)
		}
	}
	for name := range active {
		check("/u/"+name, true)
		check("/t/"+name, false)
		check("/u/admin/"+name, false)
	}
	for name := range passive {
		check("/u/"+name, false)
	}
	check("/typed/x.txt", true) // the route makes it text/html
}
