package hasura_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/api/hasura"
)

// Payloads that run script when a browser renders them on coffer's origin.
const (
	htmlPayload  = "<!DOCTYPE html><html><body><script>document.title='pwned'</script></body></html>"
	svgPayload   = `<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg"><script>document.title='pwned'</script></svg>`
	xhtmlPayload = `<?xml version="1.0"?><html xmlns="http://www.w3.org/1999/xhtml"><body><script>document.title='pwned'</script></body></html>`
)

// inlineBucket creates bucket id with allowInline and presigned URLs on.
func (e *env) inlineBucket(id string) {
	e.t.Helper()
	body := `{"id":"` + id + `","allowInline":true,"presignedUrlsEnabled":true}`
	mustStatus(e.t, e.do("POST", "/v1/buckets", strings.NewReader(body), true), http.StatusCreated, nil)
}

// uploadTyped uploads body as name into bucket, declaring its Content-Type.
func (e *env) uploadTyped(bucket, name, ctype, body string) hasura.FileMetadata {
	e.t.Helper()
	md, _ := json.Marshal(map[string]string{"name": name})
	resp := e.upload(true, part{field: "bucket-id", body: []byte(bucket)},
		part{field: "file[]", filename: name, ctype: ctype, body: []byte(body)}, part{field: "metadata[]", body: md})
	var out uploadResp
	mustStatus(e.t, resp, http.StatusCreated, &out)
	return out.ProcessedFiles[0]
}

// servedPaths returns the paths that serve file id's bytes: direct and presigned.
func (e *env) servedPaths(id string) []string {
	e.t.Helper()
	var out struct {
		URL string `json:"url"`
	}
	mustStatus(e.t, e.do("GET", "/v1/files/"+id+"/presignedurl", nil, true), http.StatusOK, &out)
	return []string{"/v1/files/" + id, strings.TrimPrefix(out.URL, e.srv.URL)}
}

// short is a served path without its query, for messages.
func short(p string) string { return strings.SplitN(p, "?", 2)[0] }

// checkSandboxed fetches every path of id with GET and HEAD (twice, the second
// from the caches) and fails unless each answer is sandboxed, nosniff and typed want.
func (e *env) checkSandboxed(id, want string, svg bool) {
	e.t.Helper()
	for _, p := range e.servedPaths(id) {
		for _, m := range []string{"GET", "HEAD", "GET"} {
			resp := e.do(m, p, nil, true)
			mustStatus(e.t, resp, http.StatusOK, nil)
			ct, csp := resp.Header.Get("Content-Type"), resp.Header.Get("Content-Security-Policy")
			if ct != want {
				e.t.Errorf("%s %s: Content-Type %q, want %q", m, short(p), ct, want)
			}
			if !strings.Contains(csp, "sandbox") || svg && !strings.Contains(csp, "default-src 'none'") {
				e.t.Errorf("%s %s: Content-Security-Policy %q, want a sandbox", m, short(p), csp)
			}
			if resp.Header.Get("X-Content-Type-Options") != "nosniff" {
				e.t.Errorf("%s %s: no X-Content-Type-Options: nosniff", m, short(p))
			}
		}
	}
}

// TestInlineHTMLDeclaredAsPNG: HTML uploaded as image/png to an allowInline bucket is
// stored as application/octet-stream, not served as text/html (issue 15, D10).
func TestInlineHTMLDeclaredAsPNG(t *testing.T) {
	e := newEnv(t)
	e.inlineBucket("inl")
	f := e.uploadTyped("inl", "cat.png", "image/png", htmlPayload)
	if f.MimeType != "application/octet-stream" {
		t.Errorf("stored mimeType %q, want application/octet-stream", f.MimeType)
	}
	for _, p := range e.servedPaths(f.ID) {
		resp := e.do("GET", p, nil, true)
		mustStatus(t, resp, http.StatusOK, nil)
		if ct := resp.Header.Get("Content-Type"); strings.Contains(ct, "html") || !coffer.PassiveType(ct) &&
			!strings.Contains(resp.Header.Get("Content-Security-Policy"), "sandbox") {
			t.Errorf("GET %s: served as %q with CSP %q", short(p), ct, resp.Header.Get("Content-Security-Policy"))
		}
	}
}

// TestInlineSVGScriptSandboxed: SVG, HTML and XHTML with script are served inline
// from an allowInline bucket only with Content-Security-Policy: sandbox and
// default-src 'none', on direct and presigned downloads, GET and HEAD (issue 15, D10).
func TestInlineSVGScriptSandboxed(t *testing.T) {
	e := newEnv(t)
	e.inlineBucket("inl")
	cases := []struct{ name, ctype, body, want string }{
		{"x.svg", "image/svg+xml", svgPayload, "image/svg+xml"},
		{"x.html", "text/html", htmlPayload, "text/html; charset=utf-8"},
		{"x.xhtml", "application/xhtml+xml", xhtmlPayload, "application/xhtml+xml"},
		{"x.xml", "", svgPayload, "text/xml; charset=utf-8"},
		{"x.pdf", "application/pdf", "%PDF-1.4\n", "application/pdf"},
	}
	for _, c := range cases {
		f := e.uploadTyped("inl", c.name, c.ctype, c.body)
		e.checkSandboxed(f.ID, c.want, true)
	}
	// Passive types keep displaying as before: no sandbox for a plain text file.
	f := e.uploadTyped("inl", "a.txt", "text/plain", "hello")
	resp := e.do("GET", "/v1/files/"+f.ID, nil, true)
	mustStatus(t, resp, http.StatusOK, nil)
	if csp := resp.Header.Get("Content-Security-Policy"); csp != "" {
		t.Errorf("text/plain served with Content-Security-Policy %q", csp)
	}
}

// TestNosniffAlways: file answers of every kind, and error answers, carry
// X-Content-Type-Options: nosniff.
func TestNosniffAlways(t *testing.T) {
	e := newEnv(t)
	f := e.uploadTyped("default", "a.txt", "text/plain", "hello world")
	checks := []struct {
		method, path string
		hdr          []string
	}{
		{"GET", "/v1/files/" + f.ID, nil},
		{"HEAD", "/v1/files/" + f.ID, nil},
		{"GET", "/v1/files/" + f.ID, []string{"Range", "bytes=0-1"}},
		{"GET", "/v1/files/" + f.ID, []string{"Range", "bytes=50-60"}},
		{"GET", "/v1/files/00000000-0000-4000-8000-000000000000", nil},
		{"GET", "/v1/files/" + f.ID + "?w=abc", nil},
	}
	for _, c := range checks {
		resp := e.do(c.method, c.path, nil, true, c.hdr...)
		resp.Body.Close()
		if resp.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s %s %v: status %d without nosniff", c.method, c.path, c.hdr, resp.StatusCode)
		}
	}
	for _, p := range e.servedPaths(f.ID) {
		resp := e.do("GET", p, nil, true, "If-None-Match", f.ETag)
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotModified {
			t.Errorf("GET %s (If-None-Match): status %d", short(p), resp.StatusCode)
		}
		if resp.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("GET %s (conditional): status %d without nosniff", short(p), resp.StatusCode)
		}
	}
}

// TestContentDispositionStripsBidi: a name stored before coffer refused bidirectional
// controls is served without them in Content-Disposition (issue 15, D11).
func TestContentDispositionStripsBidi(t *testing.T) {
	e := newEnv(t)
	f := e.uploadTyped("default", "invoice.txt", "text/plain", "hello")
	old := "invoice\u202Efdp.exe" // shows as "invoiceexe.pdf"
	if _, err := e.cache.UpdateFile(context.Background(), f.ID, coffer.FileUpdate{Name: &old}); err != nil {
		t.Fatal(err)
	}
	for _, p := range e.servedPaths(f.ID) {
		resp := e.do("GET", p, nil, true)
		mustStatus(t, resp, http.StatusOK, nil)
		if cd := resp.Header.Get("Content-Disposition"); cd != `inline; filename="invoicefdp.exe"` {
			t.Errorf("GET %s: Content-Disposition %q", short(p), cd)
		}
	}
	md, _ := json.Marshal(map[string]string{"name": "x\u202Etxt.exe"})
	resp := e.do("PATCH", "/v1/files/"+f.ID+"/metadata", strings.NewReader(string(md)), true, "Content-Type", "application/json")
	if msg := mustError(t, resp, http.StatusBadRequest); !strings.Contains(msg, "U+202E RIGHT-TO-LEFT OVERRIDE") {
		t.Errorf("rename message %q", msg)
	}
	md, _ = json.Marshal(map[string]string{"name": "x\uFEFF.txt"})
	resp = e.upload(true, part{field: "file[]", filename: "x.txt", body: []byte("x")}, part{field: "metadata[]", body: md})
	if msg := mustError(t, resp, http.StatusBadRequest); !strings.Contains(msg, "U+FEFF ZERO WIDTH NO-BREAK SPACE") {
		t.Errorf("upload message %q", msg)
	}
}
