package hostile

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/coffer/coffer/imaging/imagingtest"
)

// TestCaching downloads files the way a CDN in front of coffer would see them: with
// the admin secret, a user's JWT and a presigned URL (answers that needed a
// credential), and anonymously from a public bucket. Each credentialed answer (200,
// 206, 304, HEAD; originals and image variants; on the fast path and on net/http,
// which a Range or an If-Modified-Since header and any query lead to) is wrongly
// accepted unless its Cache-Control says private and nothing lets a shared cache
// store it (public, s-maxage, Surrogate-Control, CDN-Cache-Control). The anonymous
// answers must still carry the public bucket's own caching headers.
func TestCaching(t *testing.T) {
	s := newServer(t)
	tl := s.tally("caching")
	const cc = "public, max-age=600, s-maxage=3600"
	for _, b := range []string{`{"id":"pub","public":true,"cacheControl":"` + cc + `"}`} {
		s.mustStatus(http.StatusCreated, "POST", "/v1/buckets", strings.NewReader(b), s.admin()...)
	}
	s.mustStatus(http.StatusOK, "PATCH", "/v1/buckets/priv", strings.NewReader(`{"cacheControl":"`+cc+`"}`), s.admin()...)
	png := imagingtest.PNG(16, 16, false, 0)
	priv := s.mustUpload("alice", "priv", "p.png", png)
	signed := s.mustUpload("alice", "signed", "s.png", png)
	body, ctype := multipartBody(part{field: "bucket-id", body: []byte("pub")}, part{field: "file[]", filename: "pub.png", body: png})
	pub := uploaded(s.mustStatus(http.StatusCreated, "POST", "/v1/files", body, append(s.admin(), "Content-Type", ctype)...))[0].ID

	var pre struct {
		URL string `json:"url"`
	}
	json.Unmarshal(s.mustStatus(http.StatusOK, "GET", "/v1/files/"+signed+"/presignedurl", nil, as("alice")...).body, &pre)
	u, err := url.Parse(pre.URL)
	if err != nil {
		t.Fatal(err)
	}
	presignedPath := u.Path + "?" + u.RawQuery

	type caller struct {
		name    string
		path    string   // of the original
		hdr     []string // credentials
		private bool
	}
	callers := []caller{
		{"admin secret", "/v1/files/" + priv, s.admin(), true},
		{"JWT", "/v1/files/" + priv, as("alice"), true},
		{"presigned URL", presignedPath, nil, true},
		{"admin secret, public bucket", "/v1/files/" + pub, s.admin(), true},
		{"anonymous, public bucket", "/v1/files/" + pub, nil, false},
	}
	for _, c := range callers {
		etag := s.mustStatus(http.StatusOK, "GET", c.path, nil, c.hdr...).header.Get("Etag")
		for _, v := range cachingVariants(c.path, etag, s.images) {
			a := s.do(v.method, v.path, nil, append(append([]string{}, c.hdr...), v.hdr...)...)
			what := fmt.Sprintf("%s, %s: %s %s", c.name, v.name, v.method, v.path)
			wrong := ""
			switch {
			case a.status != v.status:
				wrong = fmt.Sprintf("status %d, want %d", a.status, v.status)
			case c.private:
				wrong = sharedCacheable(a.header)
			case a.header.Get("Cache-Control") != cc || a.header.Get("Surrogate-Control") != cc:
				wrong = fmt.Sprintf("a public answer with Cache-Control %q, Surrogate-Control %q, want the bucket's %q",
					a.header.Get("Cache-Control"), a.header.Get("Surrogate-Control"), cc)
			}
			tl.probe(what, a, wrong)
		}
	}
}

// cachingVariant is one way to ask for a download.
type cachingVariant struct {
	name, method, path string
	hdr                []string
	status             int
}

// cachingVariants are the requests made of a download URL: the fast path's (plain
// GET and HEAD, If-None-Match) and net/http's (Range, If-Modified-Since, a query),
// and image variants when libvips is there.
func cachingVariants(path, etag string, images bool) []cachingVariant {
	const old = "Sat, 01 Jan 2000 00:00:00 GMT"
	vs := []cachingVariant{
		{"plain", "GET", path, nil, http.StatusOK},
		{"plain", "HEAD", path, nil, http.StatusOK},
		{"revalidation", "GET", path, []string{"If-None-Match", etag}, http.StatusNotModified},
		{"range (net/http)", "GET", path, []string{"Range", "bytes=0-9"}, http.StatusPartialContent},
		{"If-Modified-Since (net/http)", "GET", path, []string{"If-Modified-Since", old}, http.StatusOK},
		{"If-Modified-Since (net/http)", "HEAD", path, []string{"If-Modified-Since", old}, http.StatusOK},
	}
	if images {
		sep := "?"
		if strings.Contains(path, "?") {
			sep = "&"
		}
		vs = append(vs, cachingVariant{"variant", "GET", path + sep + "w=8", nil, http.StatusOK},
			cachingVariant{"variant, range", "GET", path + sep + "w=8", []string{"Range", "bytes=0-9"}, http.StatusPartialContent})
	}
	return vs
}

// sharedCacheable says why a shared cache could store an answer ("" if it could not):
// its Cache-Control lacks private, or something addresses shared caches.
func sharedCacheable(h http.Header) string {
	directives := map[string]bool{}
	for _, d := range strings.Split(strings.ToLower(strings.Join(h.Values("Cache-Control"), ",")), ",") {
		name, _, _ := strings.Cut(strings.TrimSpace(d), "=")
		directives[name] = true
	}
	switch {
	case !directives["private"] && !directives["no-store"]:
		return fmt.Sprintf("Cache-Control %q lacks private", h.Get("Cache-Control"))
	case directives["public"] || directives["s-maxage"]:
		return fmt.Sprintf("Cache-Control %q has a shared-cache directive", h.Get("Cache-Control"))
	}
	for _, k := range []string{"Surrogate-Control", "CDN-Cache-Control", "Cloudflare-CDN-Cache-Control"} {
		if v := h.Get(k); v != "" && !strings.Contains(strings.ToLower(v), "no-store") {
			return fmt.Sprintf("%s: %s", k, v)
		}
	}
	return ""
}
