package edge

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/site"
)

// clock is a test clock the cache reads through Config.Now.
type clock struct{ off atomic.Int64 }

func (c *clock) now() time.Time           { return time.Now().Add(time.Duration(c.off.Load())) }
func (c *clock) advance(d time.Duration)  { c.off.Add(int64(d)) }
func (c *clock) config(dir string) Config { return testConfig(dir, c.now) }

func testConfig(dir string, now func() time.Time) Config {
	cfg := DefaultConfig()
	cfg.Dir, cfg.Now = dir, now
	cfg.MaxBytes, cfg.MaxObjectSize = 64<<20, 16<<20
	return cfg
}

// upstream is an httptest origin on 127.0.0.1 counting its requests.
type upstream struct {
	*httptest.Server
	n       atomic.Int64
	mu      sync.Mutex
	handler http.HandlerFunc
}

func newUpstream(t testing.TB, h http.HandlerFunc) *upstream {
	u := &upstream{handler: h}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.n.Add(1)
		u.mu.Lock()
		h := u.handler
		u.mu.Unlock()
		h(w, r)
	}))
	t.Cleanup(u.Close)
	return u
}

func (u *upstream) set(h http.HandlerFunc) {
	u.mu.Lock()
	u.handler = h
	u.mu.Unlock()
}

func (u *upstream) origin(t testing.TB, timeout time.Duration) site.Origin {
	o, err := NewHTTPOrigin(site.HTTPOrigin{URL: u.URL + "/base", Timeout: site.Duration(timeout)}, &http.Client{})
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func newCache(t testing.TB, cfg Config) *Cache {
	c, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func request(o site.Origin, path string) site.EdgeRequest {
	return site.EdgeRequest{Scope: "t1/s1", Path: path, Key: path, Origin: o}
}

// get fetches req and reads the whole body.
func get(t testing.TB, c *Cache, req site.EdgeRequest) (string, site.CacheStatus, error) {
	t.Helper()
	obj, err := c.Get(context.Background(), req)
	if err != nil {
		return "", "", err
	}
	defer obj.Close()
	b, err := io.ReadAll(obj.Content)
	return string(b), obj.Cache, err
}

func mustGet(t testing.TB, c *Cache, req site.EdgeRequest, want string, status site.CacheStatus) {
	t.Helper()
	body, st, err := get(t, c, req)
	if err != nil || body != want || st != status {
		t.Fatalf("get %s: %q %s %v; want %q %s", req.Key, trim(body), st, err, trim(want), status)
	}
}

func trim(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

func wantCode(t testing.TB, err error, code string) {
	t.Helper()
	if coffer.ErrorCode(err) != code {
		t.Fatalf("err = %v; want %s", err, code)
	}
}

// fixed answers body with headers h.
func fixed(body string, h map[string]string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		for k, v := range h {
			w.Header().Set(k, v)
		}
		if etag := h["ETag"]; etag != "" && r.Header.Get("If-None-Match") == etag {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		io.WriteString(w, body)
	}
}

// fakeOrigin is an in-process origin for answers HTTP cannot carry (a body
// longer than its Content-Length).
type fakeOrigin struct {
	n     atomic.Int64
	fetch func(key string) (*site.Fetched, error)
}

func (f *fakeOrigin) ID() string { return "fake" }

func (f *fakeOrigin) Fetch(_ context.Context, key, _ string, _ time.Time) (*site.Fetched, error) {
	f.n.Add(1)
	return f.fetch(key)
}

var errBoom = errors.New("boom")

// diskBodies sums the sizes of the body files (committed and partial) in dir,
// each inode once.
func diskBodies(t testing.TB, dir string) int64 {
	t.Helper()
	var n int64
	seen := map[uint64]bool{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // removed while walking
			}
			return err
		}
		if d.IsDir() || strings.HasSuffix(path, ".meta") {
			return nil
		}
		if fi, err := d.Info(); err == nil {
			ino := fi.Sys().(*syscall.Stat_t).Ino
			if !seen[ino] {
				seen[ino] = true
				n += fi.Size()
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}
