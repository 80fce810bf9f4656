package edge

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/site"
)

func TestCoalescing500ConcurrentMisses(t *testing.T) {
	release := make(chan struct{})
	body := strings.Repeat("x", 300<<10)
	u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		<-release
		io.WriteString(w, body)
	})
	c := newCache(t, testConfig(t.TempDir(), nil))
	req := request(u.origin(t, 0), "/big.bin")
	var wg sync.WaitGroup
	errs := make(chan error, 500)
	for range 500 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, _, err := get(t, c, req)
			if err == nil && got != body {
				err = io.ErrUnexpectedEOF
			}
			errs <- err
		}()
	}
	time.Sleep(100 * time.Millisecond) // let the misses pile up behind the flight
	close(release)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := u.n.Load(); n != 1 {
		t.Fatalf("upstream requests = %d; want 1", n)
	}
	mustGet(t, c, req, body, site.CacheHit)
}

func TestStreamingBeforeFillCompletes(t *testing.T) {
	release := make(chan struct{})
	first, rest := strings.Repeat("a", 64<<10), strings.Repeat("b", 64<<10)
	u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "131072")
		io.WriteString(w, first)
		w.(http.Flusher).Flush()
		<-release
		io.WriteString(w, rest)
	})
	defer close(release)
	c := newCache(t, testConfig(t.TempDir(), nil))
	req := request(u.origin(t, 0), "/s")
	obj, err := c.Get(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	defer obj.Close()
	buf := make([]byte, len(first))
	if _, err := io.ReadFull(obj.Content, buf); err != nil || string(buf) != first {
		t.Fatalf("first bytes while the upstream holds the rest: %v", err)
	}
	second, err := c.Get(context.Background(), req) // joins the fill in progress
	if err != nil || second.Cache != site.CacheMiss {
		t.Fatalf("join: %v %v", second, err)
	}
	defer second.Close()
	release <- struct{}{}
	b, err := io.ReadAll(obj.Content)
	if err != nil || string(b) != rest {
		t.Fatalf("rest: %d bytes, %v", len(b), err)
	}
	if b, err := io.ReadAll(second.Content); err != nil || string(b) != first+rest {
		t.Fatalf("joined reader: %d bytes, %v", len(b), err)
	}
	if u.n.Load() != 1 {
		t.Fatalf("upstream requests = %d", u.n.Load())
	}
}

func TestStaleIfErrorWithUpstreamStopped(t *testing.T) {
	var clk clock
	u := newUpstream(t, fixed("v1", map[string]string{"Cache-Control": "max-age=10, stale-while-revalidate=0, stale-if-error=100"}))
	c := newCache(t, clk.config(t.TempDir()))
	req := request(u.origin(t, time.Second), "/a")
	mustGet(t, c, req, "v1", site.CacheMiss)
	u.Close() // the listener is gone: connections are refused
	clk.advance(20 * time.Second)
	mustGet(t, c, req, "v1", site.CacheStale)
	clk.advance(100 * time.Second)
	_, _, err := get(t, c, req)
	wantCode(t, err, coffer.EUNAVAILABLE)
}

func TestStaleWhileRevalidateInBackground(t *testing.T) {
	var clk clock
	h := map[string]string{"ETag": `"v1"`, "Cache-Control": "max-age=10, stale-while-revalidate=30"}
	u := newUpstream(t, fixed("one", h))
	c := newCache(t, clk.config(t.TempDir()))
	req := request(u.origin(t, 0), "/a")
	mustGet(t, c, req, "one", site.CacheMiss)
	clk.advance(15 * time.Second)
	mustGet(t, c, req, "one", site.CacheStale)
	waitFor(t, func() bool { return c.Stats().Revalidated+uint64(u.n.Load()) >= 2 && len(inflight(c)) == 0 })
	if u.n.Load() != 2 {
		t.Fatalf("upstream requests = %d; want 2 (fill, revalidation)", u.n.Load())
	}
	mustGet(t, c, req, "one", site.CacheHit) // renewed by the 304
}

func inflight(c *Cache) map[string]*flight {
	c.mu.RLock()
	defer c.mu.RUnlock()
	m := map[string]*flight{}
	for k, v := range c.inflight {
		m[k] = v
	}
	return m
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for i := 0; i < 500; i++ {
		if cond() {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("condition not reached")
}

func TestRevalidation304And200(t *testing.T) {
	var clk clock
	var conditional int
	u := newUpstream(t, nil)
	etag, body := `"v1"`, "one"
	var mu sync.Mutex
	u.set(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		w.Header().Set("Cache-Control", "no-cache")
		w.Header().Set("ETag", etag)
		if r.Header.Get("If-None-Match") != "" {
			conditional++
			if r.Header.Get("If-None-Match") == etag {
				w.WriteHeader(http.StatusNotModified)
				return
			}
		}
		io.WriteString(w, body)
	})
	c := newCache(t, clk.config(t.TempDir()))
	req := request(u.origin(t, 0), "/a")
	mustGet(t, c, req, "one", site.CacheMiss)
	mustGet(t, c, req, "one", site.CacheRevalidated)
	mustGet(t, c, req, "one", site.CacheRevalidated)
	mu.Lock()
	etag, body = `"v2"`, "two"
	mu.Unlock()
	mustGet(t, c, req, "two", site.CacheMiss)
	mustGet(t, c, req, "two", site.CacheRevalidated)
	if conditional != 4 {
		t.Fatalf("conditional requests = %d; want 4", conditional)
	}
}

func TestNegativeCache(t *testing.T) {
	var clk clock
	u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) })
	c := newCache(t, clk.config(t.TempDir()))
	req := request(u.origin(t, 0), "/missing")
	for range 3 {
		_, _, err := get(t, c, req)
		wantCode(t, err, coffer.ENOTFOUND)
	}
	if u.n.Load() != 1 {
		t.Fatalf("upstream requests = %d; want 1", u.n.Load())
	}
	clk.advance(11 * time.Second)
	_, _, err := get(t, c, req)
	wantCode(t, err, coffer.ENOTFOUND)
	if u.n.Load() != 2 {
		t.Fatalf("after the negative TTL: upstream requests = %d; want 2", u.n.Load())
	}
	if c.Stats().NegativeHits != 2 {
		t.Fatalf("stats %+v", c.Stats())
	}
}

// brokenFill asserts reading req fails (never a clean EOF) and nothing is kept.
func brokenFill(t *testing.T, c *Cache, req site.EdgeRequest) {
	t.Helper()
	obj, err := c.Get(context.Background(), req)
	if err == nil {
		_, err = io.ReadAll(obj.Content)
		obj.Close()
	}
	if err == nil {
		t.Fatal("a broken upstream body read as a whole object")
	}
	waitFor(t, func() bool { return len(inflight(c)) == 0 })
	if s := c.Stats(); s.Entries != 0 || s.BytesOnDisk != 0 {
		t.Fatalf("a broken fill was kept: %+v", s)
	}
	if n := diskBodies(t, c.cfg.Dir); n != 0 {
		t.Fatalf("%d body bytes left on disk", n)
	}
}

func TestShortContentLength(t *testing.T) {
	u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "1000")
		io.WriteString(w, strings.Repeat("s", 500)) // then the handler ends: the server closes
	})
	c := newCache(t, testConfig(t.TempDir(), nil))
	brokenFill(t, c, request(u.origin(t, 0), "/short"))
	if c.Stats().FillErrors != 1 {
		t.Fatalf("stats %+v", c.Stats())
	}
}

func TestLongerThanContentLength(t *testing.T) {
	o := &fakeOrigin{fetch: func(string) (*site.Fetched, error) {
		return &site.Fetched{Status: 200, Header: http.Header{}, Size: 10,
			Body: io.NopCloser(strings.NewReader(strings.Repeat("l", 20)))}, nil
	}}
	c := newCache(t, testConfig(t.TempDir(), nil))
	brokenFill(t, c, request(o, "/long"))
}

func TestBodyErrorMidway(t *testing.T) {
	o := &fakeOrigin{fetch: func(string) (*site.Fetched, error) {
		r := io.MultiReader(strings.NewReader("part"), iotestErr{})
		return &site.Fetched{Status: 200, Header: http.Header{}, Size: -1, Body: io.NopCloser(r)}, nil
	}}
	c := newCache(t, testConfig(t.TempDir(), nil))
	brokenFill(t, c, request(o, "/err"))
}

type iotestErr struct{}

func (iotestErr) Read([]byte) (int, error) { return 0, errBoom }

func TestNeverEndingBody(t *testing.T) {
	u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		chunk := bytes.Repeat([]byte("n"), 32<<10)
		for r.Context().Err() == nil {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	})
	cfg := testConfig(t.TempDir(), nil)
	cfg.MaxObjectSize = 1 << 20
	c := newCache(t, cfg)
	brokenFill(t, c, request(u.origin(t, 0), "/endless"))
}

func TestStalledBodyIsCut(t *testing.T) {
	stop := make(chan struct{})
	defer close(stop)
	u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "100")
		io.WriteString(w, "partial")
		w.(http.Flusher).Flush()
		select {
		case <-stop:
		case <-r.Context().Done():
		}
	})
	c := newCache(t, testConfig(t.TempDir(), nil))
	start := time.Now()
	brokenFill(t, c, request(u.origin(t, 200*time.Millisecond), "/stall"))
	if time.Since(start) > 5*time.Second {
		t.Fatal("the stall was not cut by the origin's timeout")
	}
}

func TestObjectAboveMaxObjectSizeBypasses(t *testing.T) {
	body := strings.Repeat("B", 2<<20)
	u := newUpstream(t, fixed(body, map[string]string{"Content-Length": "2097152"}))
	cfg := testConfig(t.TempDir(), nil)
	cfg.MaxObjectSize = 1 << 20
	c := newCache(t, cfg)
	req := request(u.origin(t, 0), "/huge")
	mustGet(t, c, req, body, site.CacheBypass)
	mustGet(t, c, req, body, site.CacheBypass)
	if u.n.Load() != 2 || c.Stats().Entries != 0 || diskBodies(t, cfg.Dir) != 0 {
		t.Fatalf("requests %d, stats %+v", u.n.Load(), c.Stats())
	}
}

func TestNoStoreBypasses(t *testing.T) {
	u := newUpstream(t, fixed("secret", map[string]string{"Cache-Control": "private, max-age=60"}))
	c := newCache(t, testConfig(t.TempDir(), nil))
	req := request(u.origin(t, 0), "/p")
	mustGet(t, c, req, "secret", site.CacheBypass)
	mustGet(t, c, req, "secret", site.CacheBypass)
	if u.n.Load() != 2 {
		t.Fatalf("upstream requests = %d", u.n.Load())
	}
}

func TestSMaxAgeOverMaxAge(t *testing.T) {
	var clk clock
	u := newUpstream(t, fixed("x", map[string]string{"Cache-Control": "max-age=1000, s-maxage=5, stale-while-revalidate=0, stale-if-error=0"}))
	c := newCache(t, clk.config(t.TempDir()))
	req := request(u.origin(t, 0), "/x")
	mustGet(t, c, req, "x", site.CacheMiss)
	clk.advance(3 * time.Second)
	mustGet(t, c, req, "x", site.CacheHit)
	clk.advance(3 * time.Second)
	mustGet(t, c, req, "x", site.CacheMiss) // no validator: a plain refetch
}
