package console

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/andybalholm/brotli"
)

func newHandler(t *testing.T) *Handler {
	t.Helper()
	h, err := New(DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func do(h http.Handler, method, path string, hdr ...string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, path, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		r.Header.Set(hdr[i], hdr[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func TestConsoleValidate(t *testing.T) {
	for _, c := range []Config{{Prefix: "", CSP: "x"}, {Prefix: "console/", CSP: "x"}, {Prefix: "/console", CSP: "x"}, {Prefix: "/c/", CSP: " "}} {
		if err := c.Validate(); err == nil {
			t.Errorf("%+v: no error", c)
		}
		if _, err := New(c); err == nil {
			t.Errorf("New(%+v): no error", c)
		}
	}
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestConsoleHeaders(t *testing.T) {
	h := newHandler(t)
	for _, path := range []string{"/console/", "/console/app.js", "/console/app.css", "/console/nope.js", "/console"} {
		w := do(h, "GET", path)
		hd := w.Header()
		if got := hd.Get("Content-Security-Policy"); got != DefaultCSP {
			t.Errorf("%s: CSP %q", path, got)
		}
		for k, v := range map[string]string{"X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer", "X-Frame-Options": "DENY"} {
			if hd.Get(k) != v {
				t.Errorf("%s: %s = %q, want %q", path, k, hd.Get(k), v)
			}
		}
		if hd.Get("Set-Cookie") != "" {
			t.Errorf("%s: sets a cookie", path)
		}
	}
	for _, bad := range []string{"'unsafe-inline'", "'unsafe-eval'", "*", "http:", "https:"} {
		if strings.Contains(DefaultCSP, bad) {
			t.Errorf("CSP allows %s", bad)
		}
	}
}

func TestConsoleRoutes(t *testing.T) {
	h := newHandler(t)
	cases := []struct {
		method, path string
		status       int
		ctype        string
	}{
		{"GET", "/console/", 200, "text/html; charset=utf-8"},
		{"GET", "/console/index.html", 200, "text/html; charset=utf-8"},
		{"GET", "/console/app.js", 200, "text/javascript; charset=utf-8"},
		{"GET", "/console/strings.js", 200, "text/javascript; charset=utf-8"},
		{"GET", "/console/app.css", 200, "text/css; charset=utf-8"},
		{"GET", "/console/icon.svg", 200, "image/svg+xml"},
		{"HEAD", "/console/app.js", 200, "text/javascript; charset=utf-8"},
		{"GET", "/console/nope.js", 404, "text/plain; charset=utf-8"},
		{"GET", "/console/web/app.js", 404, "text/plain; charset=utf-8"},
		{"GET", "/console/../console/app.js", 404, "text/plain; charset=utf-8"},
		{"GET", "/consolex", 404, "text/plain; charset=utf-8"},
		{"POST", "/console/", 405, "text/plain; charset=utf-8"},
		{"DELETE", "/console/app.js", 405, "text/plain; charset=utf-8"},
		{"GET", "/console", 301, "text/plain; charset=utf-8"},
	}
	for _, c := range cases {
		w := do(h, c.method, c.path)
		if w.Code != c.status || w.Header().Get("Content-Type") != c.ctype {
			t.Errorf("%s %s: %d %q, want %d %q", c.method, c.path, w.Code, w.Header().Get("Content-Type"), c.status, c.ctype)
		}
		if c.method == "HEAD" && w.Body.Len() != 0 {
			t.Errorf("HEAD %s: body of %d bytes", c.path, w.Body.Len())
		}
		if c.method == "HEAD" && w.Header().Get("Content-Length") == "" {
			t.Errorf("HEAD %s: no Content-Length", c.path)
		}
	}
	if w := do(h, "POST", "/console/"); w.Header().Get("Allow") != "GET, HEAD" {
		t.Errorf("405 Allow = %q", w.Header().Get("Allow"))
	}
	// Relative, so that a path prefix in front (/t/{tenant}/console) is kept.
	if w := do(h, "GET", "/console"); w.Header().Get("Location") != "console/" {
		t.Errorf("redirect Location = %q", w.Header().Get("Location"))
	}
}

func TestConsoleEncodings(t *testing.T) {
	h := newHandler(t)
	plain := do(h, "GET", "/console/app.js").Body.Bytes()
	if !bytes.Contains(plain, []byte("import")) {
		t.Fatalf("app.js: %.80q", plain)
	}
	cases := []struct{ accept, enc string }{
		{"", ""}, {"identity", ""}, {"gzip", "gzip"}, {"gzip, deflate, br, zstd", "br"}, {"br;q=0, gzip", "gzip"},
		{"BR", "br"}, {"*", "br"}, {"*;q=0", ""}, {"gzip;q=0, br;q=0", ""}, {"gzip;q=0.5", "gzip"}, {"deflate", ""},
	}
	etags := map[string]string{}
	for _, c := range cases {
		w := do(h, "GET", "/console/app.js", "Accept-Encoding", c.accept)
		if got := w.Header().Get("Content-Encoding"); got != c.enc {
			t.Errorf("Accept-Encoding %q: Content-Encoding %q, want %q", c.accept, got, c.enc)
			continue
		}
		if w.Header().Get("Vary") != "Accept-Encoding" || w.Header().Get("Cache-Control") != "no-cache" {
			t.Errorf("%q: Vary %q Cache-Control %q", c.accept, w.Header().Get("Vary"), w.Header().Get("Cache-Control"))
		}
		var body []byte
		var err error
		switch c.enc {
		case "gzip":
			var zr *gzip.Reader
			if zr, err = gzip.NewReader(w.Body); err == nil {
				body, err = io.ReadAll(zr)
			}
		case "br":
			body, err = io.ReadAll(brotli.NewReader(w.Body))
		default:
			body = w.Body.Bytes()
		}
		if err != nil || !bytes.Equal(body, plain) {
			t.Errorf("%q: decoded body differs (%v)", c.accept, err)
		}
		if e, ok := etags[c.enc]; ok && e != w.Header().Get("ETag") {
			t.Errorf("%q: ETag %q, was %q for the same encoding", c.accept, w.Header().Get("ETag"), e)
		}
		etags[c.enc] = w.Header().Get("ETag")
	}
	if len(etags) != 3 || etags[""] == etags["gzip"] || etags["gzip"] == etags["br"] {
		t.Errorf("encodings share ETags: %v", etags)
	}
}

func TestConsoleConditional(t *testing.T) {
	h := newHandler(t)
	w := do(h, "GET", "/console/app.css", "Accept-Encoding", "br")
	etag := w.Header().Get("ETag")
	if !regexp.MustCompile(`^"[0-9a-f]{24}-br"$`).MatchString(etag) {
		t.Fatalf("ETag %q", etag)
	}
	for _, inm := range []string{etag, "W/" + etag, `"x", ` + etag, "*"} {
		w := do(h, "GET", "/console/app.css", "Accept-Encoding", "br", "If-None-Match", inm)
		if w.Code != 304 || w.Body.Len() != 0 || w.Header().Get("ETag") != etag {
			t.Errorf("If-None-Match %s: %d, %d bytes", inm, w.Code, w.Body.Len())
		}
	}
	// Another encoding's tag does not match.
	if w := do(h, "GET", "/console/app.css", "If-None-Match", etag); w.Code != 200 {
		t.Errorf("identity with the br tag: %d", w.Code)
	}
}

// TestPrefixes: the face claims the prefix and its bare form, which redirects.
func TestConsolePrefixes(t *testing.T) {
	h, err := New(Config{Prefix: "/admin/ui/", CSP: DefaultCSP})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(h.Prefixes(), " "); got != "/admin/ui/ /admin/ui" {
		t.Errorf("Prefixes %q", got)
	}
	if w := do(h, "GET", "/admin/ui/app.js"); w.Code != 200 {
		t.Errorf("GET under another prefix: %d", w.Code)
	}
	if w := do(h, "GET", "/admin/ui"); w.Code != 301 || w.Header().Get("Location") != "ui/" {
		t.Errorf("redirect: %d %q", w.Code, w.Header().Get("Location"))
	}
}

// TestNoInlineScriptOrStyle keeps the assets inside the CSP: no inline <script>,
// no style attribute or <style> element, no event handler attribute, no innerHTML.
func TestConsoleNoInlineScriptOrStyle(t *testing.T) {
	h := newHandler(t)
	index := string(h.assets["index.html"].identity)
	if regexp.MustCompile(`<script(?:\s[^>]*)?>[^<]`).MatchString(index) || strings.Contains(index, "<style") ||
		regexp.MustCompile(`\s(style|on\w+)=`).MatchString(index) {
		t.Errorf("index.html has inline script or style:\n%s", index)
	}
	for p, a := range h.assets {
		if !strings.HasSuffix(p, ".js") {
			continue
		}
		src := string(a.identity)
		for _, bad := range []string{"innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function"} {
			if strings.Contains(src, bad) {
				t.Errorf("%s uses %s", p, bad)
			}
		}
	}
}

// TestSize: everything the console loads fits the first-load budget (300 KB
// compressed) with room to spare.
func TestConsoleSize(t *testing.T) {
	h := newHandler(t)
	br, gz, raw := h.Size("br"), h.Size("gzip"), h.Size("")
	t.Logf("console assets: %d bytes, gzip %d, br %d", raw, gz, br)
	if gz > 300_000 || br > 300_000 {
		t.Errorf("assets too large: gzip %d, br %d", gz, br)
	}
}

// TestCompressedAtFirstRequest: New compresses nothing (an idle server keeps that
// memory); the first request of an asset compresses every asset, once.
func TestConsoleCompressedAtFirstRequest(t *testing.T) {
	h := newHandler(t)
	for p, a := range h.assets {
		if a.gz != nil || a.br != nil {
			t.Fatalf("%s compressed by New", p)
		}
	}
	do(h, "GET", "/console/nope") // a 404 compresses nothing either
	if h.assets["app.js"].gz != nil {
		t.Fatal("compressed by a 404")
	}
	do(h, "HEAD", "/console/")
	for p, a := range h.assets {
		if len(a.gz) == 0 || len(a.br) == 0 || len(a.br) >= len(a.identity)+16 {
			t.Errorf("%s: gzip %d, br %d of %d bytes", p, len(a.gz), len(a.br), len(a.identity))
		}
	}
	gz := h.assets["app.js"].gz
	do(h, "GET", "/console/app.js", "Accept-Encoding", "gzip")
	if &h.assets["app.js"].gz[0] != &gz[0] {
		t.Error("compressed again")
	}
}
