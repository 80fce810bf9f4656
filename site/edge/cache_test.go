package edge

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
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
	c := newCache(t, testConfig(t.TempDir(), nil))
	req := request(u.origin(t, 0), "/s")
	buf := make([]byte, len(first))
	var obj *site.Object
	done := make(chan error, 1)
	go func() {
		var err error
		if obj, err = c.Get(context.Background(), req); err == nil {
			_, err = io.ReadFull(obj.Content, buf)
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil || string(buf) != first {
			t.Fatalf("first bytes while the upstream holds the rest: %v", err)
		}
	case <-time.After(10 * time.Second):
		close(release)
		t.Fatal("the first bytes did not arrive before the upstream sent the rest")
	}
	defer close(release)
	defer obj.Close()
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
	waitFor(t, func() bool { return c.Stats().NotModified == 1 && len(inflight(c)) == 0 })
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
	u := newUpstream(t, stalling(t, "partial"))
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

func TestShortBodyWithACleanEOF(t *testing.T) {
	o := &fakeOrigin{fetch: func(string) (*site.Fetched, error) {
		return &site.Fetched{Status: 200, Header: http.Header{}, Size: 100,
			Body: io.NopCloser(strings.NewReader("only 13 bytes"))}, nil
	}}
	c := newCache(t, testConfig(t.TempDir(), nil))
	brokenFill(t, c, request(o, "/short-eof"))
}

func TestNoStoreRequestSkipsTheCache(t *testing.T) {
	u := newUpstream(t, fixed("fresh", nil))
	c := newCache(t, testConfig(t.TempDir(), nil))
	req := request(u.origin(t, 0), "/n")
	mustGet(t, c, req, "fresh", site.CacheMiss)
	req.NoStore = true
	mustGet(t, c, req, "fresh", site.CacheBypass)
	if u.n.Load() != 2 || c.Stats().Entries != 1 {
		t.Fatalf("requests %d, %+v", u.n.Load(), c.Stats())
	}
}

func TestIdentityIsAskedOfTheOrigin(t *testing.T) {
	u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, r.Header.Get("Accept-Encoding"))
	})
	c := newCache(t, testConfig(t.TempDir(), nil))
	mustGet(t, c, request(u.origin(t, 0), "/ae"), "identity", site.CacheMiss)
}

func TestCloseStopsFillsInProgress(t *testing.T) {
	u := newUpstream(t, stalling(t, "begin"))
	c, err := New(testConfig(t.TempDir(), nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	obj, err := c.Get(context.Background(), request(u.origin(t, 0), "/c"))
	if err != nil {
		t.Fatal(err)
	}
	defer obj.Close()
	closed := make(chan struct{})
	go func() { c.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not stop the fill")
	}
	if _, err := io.ReadAll(obj.Content); err == nil {
		t.Fatal("a fill stopped by Close read as whole")
	}
	_, _, err = get(t, c, request(u.origin(t, 0), "/d"))
	wantCode(t, err, coffer.EUNAVAILABLE)
}

func TestStaleServedWhileTheBreakerIsOpen(t *testing.T) {
	var clk clock
	u := newUpstream(t, fixed("old", map[string]string{"Cache-Control": "max-age=1, stale-while-revalidate=0"}))
	cfg := clk.config(t.TempDir())
	cfg.BreakerCooldown = 10 * time.Second
	c := newCache(t, cfg)
	o := u.origin(t, 0)
	mustGet(t, c, request(o, "/keep"), "old", site.CacheMiss)
	u.set(func(w http.ResponseWriter, r *http.Request) { http.Error(w, "x", 500) })
	for i := range 5 {
		get(t, c, request(o, fmt.Sprint("/f", i)))
	}
	n := u.n.Load()
	clk.advance(2 * time.Second)
	mustGet(t, c, request(o, "/keep"), "old", site.CacheStale)
	if u.n.Load() != n {
		t.Fatal("the origin was asked while its breaker was open")
	}
}

// stalling sends Content-Length 100, then start, then nothing until the client
// leaves or the test ends.
func stalling(t *testing.T, start string) http.HandlerFunc {
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) })
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "100")
		io.WriteString(w, start)
		w.(http.Flusher).Flush()
		select {
		case <-stop:
		case <-r.Context().Done():
		}
	}
}

// TestLongerThanContentLengthOverHTTP: an HTTP/1.1 upstream that sends more
// bytes than its Content-Length. The client cannot tell the extra bytes from
// the start of a next response, so the entity is the declared length: the
// edge keeps and serves exactly those bytes, never the surplus (Go's transport
// then drops the connection, as the surplus is an unsolicited response).
func TestLongerThanContentLengthOverHTTP(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				http.ReadRequest(bufio.NewReader(conn))
				io.WriteString(conn, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello, and some more")
			}()
		}
	}()
	o, _ := NewHTTPOrigin(site.HTTPOrigin{URL: "http://" + ln.Addr().String()}, &http.Client{})
	c := newCache(t, testConfig(t.TempDir(), nil))
	mustGet(t, c, request(o, "/l"), "hello", site.CacheMiss)
	mustGet(t, c, request(o, "/l"), "hello", site.CacheHit)
}
