package site_test

import (
	"fmt"

	"github.com/coffer/coffer/site"
)

// A site of one bucket with an SPA fallback: Parse checks the document, Compile
// makes it ready to serve, and Route maps a clean path to a route and its key.
func ExampleCompile() {
	s, err := site.Parse([]byte(`{"id":"www","hosts":["www.example.com"],"routes":[
	  {"path":"/media/*","stripPrefix":"/media","target":{"bucket":{"id":"media"}}},
	  {"path":"/*","target":{"bucket":{"id":"web","prefix":"site/"}},"fallback":"/index.html"}]}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	c, err := site.Compile(s, "acme", nil) // nil: no upstream targets to make origins for
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, p := range []string{"/", "/docs/", "/media/a.png"} {
		r, key, _ := c.Route(p)
		fmt.Println(p, "→", r.Label, key)
	}
	_, err = site.Parse([]byte(`{"id":"www","hosts":["www.example.com"],"routes":[{"path":"/*","target":{"http":{"url":"ftp://x"}}}]}`))
	fmt.Println(err)
	// Output:
	// / → bucket:web site/index.html
	// /docs/ → bucket:web site/docs/index.html
	// /media/a.png → bucket:media a.png
	// invalid: routes[0].target.http.url: must be an absolute http(s) URL with a host
}
