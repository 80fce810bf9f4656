package sites

import (
	"slices"
	"testing"

	"github.com/coffer/coffer/site"
)

// A file's name maps back to the paths a site serves it at (the index document's
// directory too), and a path to the names it is served from, so that purges by
// path and by file change reach each other.
func TestSitePathsOfNames(t *testing.T) {
	s, err := site.Parse([]byte(`{"id": "w", "hosts": ["w.test"], "routes": [
	  {"path": "/docs/*", "stripPrefix": "/docs", "target": {"bucket": {"id": "manuals", "prefix": "v2/"}}},
	  {"path": "/about", "target": {"redirect": {"to": "/docs/"}}},
	  {"path": "/*", "target": {"bucket": {"id": "www"}}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	c, err := site.Compile(s, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		bucket, name string
		want         []string
	}{
		{"www", "index.html", []string{"/index.html", "/"}},
		{"www", "a/b/index.html", []string{"/a/b/index.html", "/a/b/"}},
		{"www", "app.js", []string{"/app.js"}},
		{"www", "docs/x.html", nil}, // /docs/ goes to the first route
		{"www", "about", nil},       // the redirect takes /about
		{"manuals", "v2/guide.html", []string{"/docs/guide.html"}},
		{"manuals", "v1/guide.html", nil},
		{"other", "index.html", nil},
	} {
		if got := pathsOf(c, tc.bucket, tc.name); !slices.Equal(got, tc.want) {
			t.Errorf("pathsOf(%s, %s) = %q, want %q", tc.bucket, tc.name, got, tc.want)
		}
	}
	keys := bucketKeys(c, "/docs/guide.html")
	if len(keys) != 4 || keys[0] != (bucketKey{"manuals", "v2/guide.html"}) || keys[1] != (bucketKey{"manuals", "v2/guide.html.br"}) {
		t.Errorf("bucketKeys(/docs/guide.html) = %v", keys)
	}
	if keys := bucketKeys(c, "/"); len(keys) == 0 || keys[0] != (bucketKey{"www", "index.html"}) {
		t.Errorf("bucketKeys(/) = %v", keys)
	}
	if keys := bucketKeys(c, "/about"); keys != nil {
		t.Errorf("bucketKeys(/about) = %v", keys)
	}
}
