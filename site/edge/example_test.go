package edge_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"

	"github.com/coffer/coffer/site"
	"github.com/coffer/coffer/site/edge"
)

// The app opens one Cache for the process and one Origin per route target;
// the second Get is answered from disk.
func Example() {
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "max-age=300")
		io.WriteString(w, "hello from "+r.URL.Path)
	}))
	defer upstream.Close()
	dir, _ := os.MkdirTemp("", "edge-example")
	defer os.RemoveAll(dir)

	cfg := edge.DefaultConfig()
	cfg.Dir = dir
	cache, err := edge.New(cfg, nil)
	if err != nil {
		panic(err)
	}
	defer cache.Close()
	// Production passes the webhook SSRF guard's client (guard.Client(0)).
	origin, err := edge.NewHTTPOrigin(site.HTTPOrigin{URL: upstream.URL + "/static/"}, &http.Client{})
	if err != nil {
		panic(err)
	}
	req := site.EdgeRequest{Scope: "acme/www", Path: "/app.js", Key: "app.js", Origin: origin}
	for range 2 {
		obj, err := cache.Get(context.Background(), req)
		if err != nil {
			panic(err)
		}
		b, _ := io.ReadAll(obj.Content)
		obj.Close()
		fmt.Println(obj.Cache, string(b))
	}
	fmt.Println(cache.Purge("acme/www", site.Purge{Paths: []string{"/app.js"}}), "purged")
	// Output:
	// MISS hello from /static/app.js
	// HIT hello from /static/app.js
	// 1 purged
}
