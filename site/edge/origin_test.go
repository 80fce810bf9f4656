package edge

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/site"
)

func TestHTTPOriginKeyURL(t *testing.T) {
	o, err := NewHTTPOrigin(site.HTTPOrigin{URL: "http://127.0.0.1:1/base"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]string{
		"/a/b c.js":      "http://127.0.0.1:1/base/a/b%20c.js",
		"x?y#z":          "http://127.0.0.1:1/base/x%3Fy%23z",
		"/dir/%2e%2e/up": "http://127.0.0.1:1/base/dir/%252e%252e/up",
	} {
		if got, err := o.KeyURL(key); err != nil || got != want {
			t.Errorf("%q → %q %v; want %q", key, got, err, want)
		}
	}
	for _, key := range []string{"/a/../b", "./a", "/a/.", "a\\b", "a\x00b", ".."} {
		if _, err := o.KeyURL(key); coffer.ErrorCode(err) != coffer.EINVALID {
			t.Errorf("%q: %v; want EINVALID", key, err)
		}
	}
	for _, bad := range []string{"ftp://h/", "http://u:p@h/", "http://h/?q", "/rel", "http://"} {
		if _, err := NewHTTPOrigin(site.HTTPOrigin{URL: bad}, nil); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestHTTPOriginHeadersRedirectsAndStatuses(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer t" {
			http.Error(w, "no token", http.StatusForbidden)
			return
		}
		switch r.URL.Path {
		case "/redirect":
			http.Redirect(w, r, "/ok", http.StatusFound)
		case "/gone":
			w.WriteHeader(http.StatusGone)
		case "/fail":
			http.Error(w, "x", http.StatusServiceUnavailable)
		default:
			io.WriteString(w, "ok")
		}
	}))
	defer srv.Close()
	o, err := NewHTTPOrigin(site.HTTPOrigin{URL: srv.URL, Headers: map[string]string{"Authorization": "Bearer t"}}, &http.Client{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if f, err := o.Fetch(ctx, "/ok", "", time.Time{}); err != nil || f.Status != 200 {
		t.Fatalf("ok: %v %v", f, err)
	} else {
		f.Body.Close()
	}
	if f, err := o.Fetch(ctx, "/gone", "", time.Time{}); err != nil || f.Status != 404 {
		t.Fatalf("410: %v %v", f, err)
	}
	for _, k := range []string{"/redirect", "/fail"} {
		if _, err := o.Fetch(ctx, k, "", time.Time{}); err == nil {
			t.Fatalf("%s: no error", k)
		}
	}
	other, _ := NewHTTPOrigin(site.HTTPOrigin{URL: srv.URL, Headers: map[string]string{"Authorization": "Bearer u"}}, nil)
	if other.ID() == o.ID() || strings.Contains(o.ID(), "Bearer") {
		t.Fatalf("IDs %q %q", o.ID(), other.ID())
	}
}

func TestHTTPOriginHeaderTimeout(t *testing.T) {
	stop := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-stop:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(stop)
	o, _ := NewHTTPOrigin(site.HTTPOrigin{URL: srv.URL, Timeout: site.Duration(100 * time.Millisecond)}, nil)
	_, err := o.Fetch(context.Background(), "/slow", "", time.Time{})
	if !errors.Is(err, errStalled) {
		t.Fatalf("err = %v; want errStalled", err)
	}
}

// serve answers a front-end request from the cache as the serving layer does,
// with http.ServeContent (ranges, and sendfile for *os.File).
func serve(c *Cache, o site.Origin) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		obj, err := c.Get(r.Context(), request(o, r.URL.Path))
		if err != nil {
			http.Error(w, err.Error(), 502)
			return
		}
		defer obj.Close()
		w.Header().Set("X-Cache", string(obj.Cache))
		http.ServeContent(w, r, "", obj.ModTime, obj.Content)
	})
}

func rangeGet(t *testing.T, url, rng string) (string, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Range", rng)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusPartialContent {
		t.Fatalf("range %s: %d %v", rng, resp.StatusCode, err)
	}
	return string(b), resp.Header.Get("X-Cache")
}

func TestRangeOnMissAndHit(t *testing.T) {
	body := strings.Repeat("0123456789", 20000)
	release := make(chan struct{})
	u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "200000")
		io.WriteString(w, body[:100000])
		w.(http.Flusher).Flush()
		<-release
		io.WriteString(w, body[100000:])
	})
	c := newCache(t, testConfig(t.TempDir(), nil))
	front := httptest.NewServer(serve(c, u.origin(t, 0)))
	defer front.Close()
	// On a miss the range is served from the fill as soon as its bytes arrived,
	// while the upstream still holds the rest.
	got, st := rangeGet(t, front.URL+"/r", "bytes=10-29")
	if got != body[10:30] || st != "MISS" {
		t.Fatalf("range on a miss: %q %s", got, st)
	}
	close(release)
	waitFor(t, func() bool { return c.Stats().Entries == 1 })
	got, st = rangeGet(t, front.URL+"/r", "bytes=150000-150009")
	if got != body[150000:150010] || st != "HIT" {
		t.Fatalf("range on a hit: %q %s", got, st)
	}
	if u.n.Load() != 1 {
		t.Fatalf("upstream requests = %d", u.n.Load())
	}
}

func TestPassThroughSeeksForward(t *testing.T) {
	b := &streamBody{r: strings.NewReader("0123456789"), size: 10}
	if n, err := b.Seek(0, io.SeekEnd); n != 10 || err != nil {
		t.Fatal(n, err)
	}
	b.Seek(4, io.SeekStart)
	buf := make([]byte, 3)
	if _, err := io.ReadFull(b, buf); err != nil || string(buf) != "456" {
		t.Fatalf("%q %v", buf, err)
	}
	if _, err := b.Seek(0, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Read(buf); err != errSeek {
		t.Fatalf("backward read: %v", err)
	}
}
