package hostile

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/zstd"

	"github.com/coffer/coffer"
)

// contentHost is the host of tenant a's site in the sites_content category.
const contentHost = "content.site.test"

// contentSite serves tenant a's bucket "shared" (its users upload there) at /u/,
// with an SPA fallback that is a user's HTML at /f/, and bucket "a-site" (only
// the admin writes it) at /adm/.
const contentSite = `{"site":{"id":"content","hosts":["` + contentHost + `"],"routes":[
 {"path":"/u/*","stripPrefix":"/u","target":{"bucket":{"id":"shared"}}},
 {"path":"/f/*","stripPrefix":"/f","target":{"bucket":{"id":"shared"}},"fallback":"/f/x.html"},
 {"path":"/adm/*","stripPrefix":"/adm","target":{"bucket":{"id":"a-site"}}}]}}`

// codings are the precompressed siblings' suffixes and their Content-Encoding.
var codings = []struct{ suffix, name string }{{".br", "br"}, {".gz", "gzip"}, {".zst", "zstd"}}

// TestSitesContent: on tenant a's site, a user's precompressed sibling never
// answers for the admin's page or another user's (fast path and net/http, every
// coding), while the admin-only bucket's siblings still do; a user's active
// upload (HTML, SVG, XML, JS, XHTML), served directly or as an SPA fallback, carries
// the sandbox or is an attachment; CreateSite and UpdateSite refuse redirects a
// browser reads as scheme-relative and proxy-control headers, naming what is
// wrong; an HTTP origin's header never comes back.
func TestSitesContent(t *testing.T) {
	ts := newTenantServer(t)
	tl := ts.tally("sites_content")
	a := ts.a
	ts.mustHost(http.StatusCreated, a.host, "POST", "/v1/buckets", `{"id":"a-site"}`, append(a.admin(), "Content-Type", "application/json")...)
	ts.mustRPC(http.StatusOK, a.host, "SiteService/CreateSite", contentSite, a.admin()...)
	probeSiblings(ts, tl)
	probeActiveTypes(ts, tl)
	probeSiteDocs(ts, tl)
}

// page is the admin's compressible page; evil the payload of the users' siblings.
var (
	page = bytes.Repeat([]byte("<p>the admin's page</p>\n"), 100)
	evil = []byte("<script>alert(document.domain)</script>")
)

// probeSiblings: the admin's p.html (and user u2's q.html) next to u1's
// p.html.{br,gz,zst} (and q.html's) and u1's own later p.html in "shared"; the
// admin's own in "a-site".
func probeSiblings(ts *tenantServer, tl *tally) {
	a := ts.a
	ts.putFile(a.host, "shared", "p.html", "text/html", page, a.admin()...)
	ts.putFile(a.host, "shared", "q.html", "text/html", page, a.user("u2")...)
	ts.putFile(a.host, "a-site", "p.html", "text/html", page, a.admin()...)
	ts.putFile(a.host, "shared", "p.html", "text/html", evil, a.user("u1")...) // same name, later: not the page
	for _, c := range codings {
		for _, name := range []string{"p.html", "q.html"} {
			ts.putFile(a.host, "shared", name+c.suffix, "application/octet-stream", compress(c.name, evil), a.user("u1")...)
		}
		ts.putFile(a.host, "a-site", "p.html"+c.suffix, "application/octet-stream", compress(c.name, page[:len(page)/2]), a.admin()...)
	}
	for _, c := range codings {
		for _, path := range []string{"/u/p.html", "/u/%70.html", "/u/q.html", "/u/%71.html", "/adm/p.html", "/adm/%70.html"} {
			got := ts.hostDo(contentHost, "GET", path, "", "Accept-Encoding", c.name)
			plain, err := decompress(got.header.Get("Content-Encoding"), got.body)
			wrong := ""
			switch {
			case got.status != http.StatusOK || err != nil:
				wrong = fmt.Sprintf("want 200 in a coding that decodes (%v)", err)
			case strings.HasPrefix(path, "/adm/") && !bytes.Equal(plain, page[:len(page)/2]):
				wrong = "the admin-only bucket's sibling was not used"
			case !strings.HasPrefix(path, "/adm/") && !bytes.Equal(plain, page):
				wrong = fmt.Sprintf("served %.40q for the page", plain)
			}
			tl.probe(fmt.Sprintf("GET %s Accept-Encoding: %s", path, c.name), got, wrong)
		}
	}
}

// activeTypes are uploads a browser runs script in, by name and declared type.
var activeTypes = map[string]string{
	"x.html": "text/html", "x.svg": "image/svg+xml", "x.xml": "application/xml", "x.js": "application/javascript",
	"x.xhtml": "application/xhtml+xml", "x.htm": "text/html; charset=utf-8", "y.xml": "text/xml",
}

// probeActiveTypes: u1's active uploads in "shared", on both paths, whole and
// compressed, and as the SPA fallback of a missing page.
func probeActiveTypes(ts *tenantServer, tl *tally) {
	a := ts.a
	markup := []byte(`<?xml version="1.0"?><html xmlns="http://www.w3.org/1999/xhtml"><svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>` +
		`<script>alert(document.cookie)</script></html>` + strings.Repeat(" ", 2048))
	script := []byte("fetch('/v1/files').then(r => r.text()).then(alert);\n" + strings.Repeat(" ", 2048))
	for name, ctype := range activeTypes {
		body := markup
		if strings.HasSuffix(name, ".js") {
			body = script // as markup it would be stored as application/octet-stream (coffer.StoredType), passive
		}
		ts.putFile(a.host, "shared", name, ctype, body, a.user("u1")...)
		slow := "/u/%" + fmt.Sprintf("%02X", name[0]) + name[1:] // percent-encoded: net/http, not the fast path
		for _, path := range []string{"/u/" + name, slow} {
			for _, ae := range []string{"identity", "gzip", "br"} {
				for _, method := range []string{"GET", "HEAD"} {
					got := ts.hostDo(contentHost, method, path, "", "Accept-Encoding", ae)
					tl.probe(fmt.Sprintf("%s %s (%s) Accept-Encoding: %s", method, path, ctype, ae), got, unsandboxed(got))
				}
			}
		}
	}
	for _, path := range []string{"/f/settings/profile", "/f/%73ettings"} {
		got := ts.hostDo(contentHost, "GET", path, "", "Accept", "text/html")
		tl.probe("GET "+path+" (a user's SPA fallback)", got, unsandboxed(got))
	}
}

// unsandboxed is "" if a is a 200 carrying /v1's sandbox policy or served as an
// attachment.
func unsandboxed(a answer) string {
	switch {
	case a.status != http.StatusOK:
		return "want 200"
	case strings.HasPrefix(a.header.Get("Content-Disposition"), "attachment"):
		return ""
	}
	for _, p := range a.header.Values("Content-Security-Policy") {
		if p == coffer.SandboxCSP {
			return ""
		}
	}
	return fmt.Sprintf("served as %q without the sandbox or attachment", a.header.Get("Content-Type"))
}

// redirectTargets are redirect targets a browser reads as another host's.
var redirectTargets = []string{`/\evil.invalid`, `\/evil.invalid`, `\\evil.invalid`, `/\/evil.invalid`, `//evil.invalid`,
	`/\\evil.invalid/x`, "/\t/evil.invalid", "\t//evil.invalid", " //evil.invalid", "/\n/evil.invalid", `https:\\evil.invalid`,
	`https://ok.test\@evil.invalid`, "/\x00/evil.invalid", "/\u3000/evil.invalid", `/:splat\evil`}

// proxyHeaders are response headers a server or CDN in front acts on.
var proxyHeaders = []string{"X-Accel-Redirect", "x-accel-redirect", "X-Accel-Buffering", "X-Accel-Expires", "X-Accel-Limit-Rate",
	"X-Accel-Charset", "X-Sendfile", "X-Sendfile-Type", "X-Lighttpd-Send-File", "X-LiteSpeed-Location", "X-LiteSpeed-Cache-Control",
	"CDN-Cache-Control", "Cloudflare-CDN-Cache-Control", "Surrogate-Control", "Edge-Control", "X-Reproxy-URL"}

// probeSiteDocs: CreateSite and UpdateSite refuse each redirect target and each
// proxy-control header (in a route's headers and in a site header rule), naming
// the field; an HTTP origin's header is answered by name only.
func probeSiteDocs(ts *tenantServer, tl *tally) {
	a := ts.a
	doc := func(id, route, extra string) string {
		return `{"site":{"id":"` + id + `","hosts":["` + id + `.site.test"],"routes":[` + route + `]` + extra + `}}`
	}
	update := func(d string) string { return `{"id":"content",` + strings.TrimPrefix(d, "{") }
	for _, to := range redirectTargets {
		d := doc("content", `{"path":"/old/*","target":{"redirect":{"to":`+jsonString(to)+`}}}`, "")
		for _, m := range []string{"CreateSite", "UpdateSite"} {
			body := strings.Replace(d, `"id":"content"`, `"id":"redir"`, 1)
			if m == "UpdateSite" {
				body = update(d)
			}
			got := ts.rpc(a.host, "SiteService/"+m, body, a.admin()...)
			tl.probe(fmt.Sprintf("%s redirect to %q", m, to), got, refusedNaming(got, "redirect.to"))
		}
	}
	bucket := `"target":{"bucket":{"id":"shared"}}`
	for _, h := range proxyHeaders {
		docs := []string{
			doc("proxy", `{"path":"/*",`+bucket+`,"headers":{"`+h+`":"/internal/secret"}}`, ""),
			doc("proxy", `{"path":"/*",`+bucket+`}`, `,"headers":[{"match":"*","set":{"`+h+`":"max-age=31536000"}}]`),
		}
		for _, d := range docs {
			got := ts.rpc(a.host, "SiteService/CreateSite", d, a.admin()...)
			tl.probe("CreateSite setting "+h, got, refusedNaming(got, h))
			u := update(strings.Replace(d, `"id":"proxy","hosts":["proxy.site.test"]`, `"id":"content","hosts":["`+contentHost+`"]`, 1))
			got = ts.rpc(a.host, "SiteService/UpdateSite", u, a.admin()...)
			tl.probe("UpdateSite setting "+h, got, refusedNaming(got, h))
		}
	}
	const secret = "Bearer origin-header-secret"
	made := ts.rpc(a.host, "SiteService/CreateSite", doc("origin", `{"path":"/*","target":{"http":{"url":"http://127.0.0.1:9/",`+
		`"headers":{"Authorization":"`+secret+`"}}}}`, ""), a.admin()...)
	for m, got := range map[string]answer{"CreateSite": made, "GetSite": ts.rpc(a.host, "SiteService/GetSite", `{"id":"origin"}`, a.admin()...),
		"ListSites": ts.rpc(a.host, "SiteService/ListSites", `{}`, a.admin()...)} {
		wrong := ""
		if got.status != http.StatusOK || bytes.Contains(got.body, []byte(secret)) || !bytes.Contains(got.body, []byte(`"headersSet":["Authorization"]`)) {
			wrong = "want 200 naming the header in headersSet, without its value"
		}
		tl.probe(m+" of an origin with a header", got, wrong)
	}
}

// putFile uploads content named name with Content-Type ctype into bucket through
// host, failing the test unless it is stored.
func (s *server) putFile(host, bucket, name, ctype string, content []byte, hdr ...string) {
	s.t.Helper()
	body, mt := multipartBody(part{field: "bucket-id", body: []byte(bucket)},
		part{field: "file[]", filename: name, ctype: ctype, body: content})
	s.mustHost(http.StatusCreated, host, "POST", "/v1/files", body.String(), append(hdr, "Content-Type", mt)...)
}

// compress returns b in coding ("br", "gzip", "zstd").
func compress(coding string, b []byte) []byte {
	var buf bytes.Buffer
	var w io.WriteCloser
	switch coding {
	case "br":
		w = brotli.NewWriter(&buf)
	case "gzip":
		w = gzip.NewWriter(&buf)
	default:
		w, _ = zstd.NewWriter(&buf)
	}
	w.Write(b)
	w.Close()
	return buf.Bytes()
}

// decompress undoes coding ("" for none).
func decompress(coding string, b []byte) ([]byte, error) {
	var r io.Reader
	switch coding {
	case "":
		return b, nil
	case "br":
		r = brotli.NewReader(bytes.NewReader(b))
	case "gzip":
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			return nil, err
		}
		r = zr
	case "zstd":
		zr, err := zstd.NewReader(bytes.NewReader(b))
		if err != nil {
			return nil, err
		}
		defer zr.Close()
		r = zr
	default:
		return nil, fmt.Errorf("unknown coding %q", coding)
	}
	return io.ReadAll(r)
}
