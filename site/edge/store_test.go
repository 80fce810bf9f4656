package edge

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/site"
)

func TestDiskBoundUnderChurn(t *testing.T) {
	u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		size := 10<<10 + (len(r.URL.Path)*7919)%(200<<10)
		if strings.HasSuffix(r.URL.Path, "-nolen") {
			w.(http.Flusher).Flush() // chunked: the fill reserves as it grows
		} else {
			w.Header().Set("Content-Length", strconv.Itoa(size))
		}
		w.Write([]byte(strings.Repeat("c", size)))
	})
	cfg := testConfig(t.TempDir(), nil)
	cfg.MaxBytes, cfg.MaxObjectSize = 1<<20, 256<<10
	c := newCache(t, cfg)
	o := u.origin(t, 0)
	stop := make(chan struct{})
	var over atomic.Int64
	var watch sync.WaitGroup
	watch.Add(1)
	go func() {
		defer watch.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			// Under the cache's lock no entry is evicted or reserved, so the
			// walk sees one state (a fill renamed meanwhile counts once, by inode).
			c.mu.Lock()
			n := diskBodies(t, cfg.Dir)
			c.mu.Unlock()
			if n > cfg.MaxBytes {
				over.Store(n)
			}
		}
	}()
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rnd := rand.New(rand.NewPCG(uint64(g), 1))
			for range 80 {
				k := fmt.Sprintf("/k%d", rnd.IntN(60))
				if rnd.IntN(4) == 0 {
					k += "-nolen"
				}
				if _, _, err := get(t, c, request(o, k)); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	watch.Wait()
	if n := over.Load(); n != 0 {
		t.Fatalf("body bytes on disk reached %d > MaxBytes %d", n, cfg.MaxBytes)
	}
	s := c.Stats()
	if s.Evictions == 0 || s.BytesOnDisk > cfg.MaxBytes || s.BytesOnDisk != diskBodies(t, cfg.Dir) {
		t.Fatalf("stats %+v; on disk %d", s, diskBodies(t, cfg.Dir))
	}
}

func TestSieveSparesVisitedEntriesInAScan(t *testing.T) {
	var s sieve
	hot := &entry{meta: meta{Key: "hot"}}
	s.insert(hot)
	hot.visited.Store(true)
	for i := range 10 {
		s.insert(&entry{meta: meta{Key: fmt.Sprint("scan", i)}})
	}
	for range 10 {
		v := s.victim()
		if v == hot {
			t.Fatal("a scan evicted the visited entry")
		}
		s.remove(v)
	}
	if s.head != hot || s.tail != hot {
		t.Fatal("the hot entry should be the one left")
	}
}

func TestPurge(t *testing.T) {
	u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/base/assets/") {
			w.Header().Set("Surrogate-Key", "assets build-7")
		}
		io.WriteString(w, r.URL.Path)
	})
	c := newCache(t, testConfig(t.TempDir(), nil))
	o := u.origin(t, 0)
	fill := func(scope, path string, tags ...string) site.EdgeRequest {
		req := site.EdgeRequest{Scope: scope, Path: path, Key: path, Origin: o, Tags: tags}
		mustGet(t, c, req, "/base"+path, site.CacheMiss)
		return req
	}
	a := fill("t1/s1", "/assets/a.js")
	b := fill("t1/s1", "/assets/b.css")
	idx := fill("t1/s1", "/index.html", "html")
	doc := fill("t1/s1", "/docs/x.html", "html")
	other := fill("t2/s1", "/index.html", "html")
	derive(t, c, "t1/s1", "/index.html", "gzip", "zipped", site.CacheMiss)
	held, err := c.Get(context.Background(), a) // open before the purge: stays readable
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()

	if n := c.Purge("t1/s1", site.Purge{Paths: []string{"/index.html"}}); n != 2 {
		t.Fatalf("purge path dropped %d; want the page and its derived copy", n)
	}
	mustGet(t, c, idx, "/base/index.html", site.CacheMiss)
	mustGet(t, c, other, "/base/index.html", site.CacheHit) // another tenant's entry stays
	mustGet(t, c, doc, "/base/docs/x.html", site.CacheHit)
	if n := c.Purge("t1/s1", site.Purge{Tags: []string{"build-7"}}); n != 2 { // from Surrogate-Key
		t.Fatalf("purge tag dropped %d", n)
	}
	if b, err := io.ReadAll(held.Content); err != nil || string(b) != "/base/assets/a.js" {
		t.Fatalf("a purged entry open before the purge: %q %v", b, err)
	}
	mustGet(t, c, b, "/base/assets/b.css", site.CacheMiss)
	if n := c.Purge("t1/s1", site.Purge{Prefixes: []string{"/docs/"}}); n != 1 {
		t.Fatalf("purge prefix dropped %d", n)
	}
	if n := c.Purge("t1/s1", site.Purge{Tags: []string{"html"}}); n != 1 { // the route's tag: index.html
		t.Fatalf("purge route tag dropped %d", n)
	}
	mustGet(t, c, a, "/base/assets/a.js", site.CacheMiss)
	if n := c.Purge("t1/s1", site.Purge{}); n != 2 { // a.js, b.css
		t.Fatalf("purge scope dropped %d", n)
	}
	mustGet(t, c, other, "/base/index.html", site.CacheHit)
	if s := c.Stats(); s.Entries != 1 {
		t.Fatalf("entries left %d", s.Entries)
	}
}

func TestPurgeDropsNegativeEntries(t *testing.T) {
	u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) })
	c := newCache(t, testConfig(t.TempDir(), nil))
	req := request(u.origin(t, 0), "/gone")
	_, _, err := get(t, c, req)
	wantCode(t, err, coffer.ENOTFOUND)
	if n := c.Purge("t1/s1", site.Purge{Paths: []string{"/gone"}}); n != 1 {
		t.Fatalf("purge dropped %d", n)
	}
	get(t, c, req)
	if u.n.Load() != 2 {
		t.Fatalf("upstream requests = %d", u.n.Load())
	}
}

// derive asks for a derived copy made of content.
func derive(t *testing.T, c *Cache, scope, path, variant, content string, want site.CacheStatus) {
	t.Helper()
	obj, err := c.Derived(context.Background(), site.DerivedRequest{
		Scope: scope, Path: path, Variant: variant, SourceETag: `"e1"`, Type: "text/html",
		Make: func(_ context.Context, w io.Writer) error { _, err := io.WriteString(w, content); return err },
	})
	if err != nil {
		t.Fatal(err)
	}
	defer obj.Close()
	b, err := io.ReadAll(obj.Content)
	if err != nil || string(b) != content || obj.Cache != want || obj.Encoding != variant {
		t.Fatalf("derived: %q %v %s", b, err, obj.Cache)
	}
}

func TestDerivedIsMadeOnce(t *testing.T) {
	c := newCache(t, testConfig(t.TempDir(), nil))
	var makes atomic.Int64
	release := make(chan struct{})
	req := site.DerivedRequest{Scope: "t1/s1", Path: "/a.js", Variant: "br", SourceETag: `"s"`,
		Make: func(_ context.Context, w io.Writer) error {
			makes.Add(1)
			io.WriteString(w, "first ")
			<-release
			_, err := io.WriteString(w, "second")
			return err
		}}
	var wg sync.WaitGroup
	for i := range 100 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			obj, err := c.Derived(context.Background(), req)
			if err != nil {
				t.Error(err)
				return
			}
			defer obj.Close()
			if i == 0 { // streamed while Make still runs
				buf := make([]byte, 6)
				io.ReadFull(obj.Content, buf)
				close(release)
			}
			if b, err := io.ReadAll(obj.Content); err != nil || !strings.HasSuffix(string(b), "second") {
				t.Errorf("%q %v", b, err)
			}
		}()
	}
	wg.Wait()
	if makes.Load() != 1 {
		t.Fatalf("Make ran %d times", makes.Load())
	}
	obj, err := c.Derived(context.Background(), req)
	if err != nil || obj.Cache != site.CacheHit || obj.ETag != `"s-br"` {
		t.Fatalf("%+v %v", obj, err)
	}
	obj.Close()
}

func TestDerivedFailureIsNotKept(t *testing.T) {
	c := newCache(t, testConfig(t.TempDir(), nil))
	req := site.DerivedRequest{Scope: "t1/s1", Path: "/a.js", Variant: "br", SourceETag: `"s"`,
		Make: func(_ context.Context, w io.Writer) error { io.WriteString(w, "half"); return errBoom }}
	obj, err := c.Derived(context.Background(), req)
	if err == nil {
		_, err = io.ReadAll(obj.Content)
		obj.Close()
	}
	if err == nil {
		t.Fatal("a failed Make read as a whole copy")
	}
	waitFor(t, func() bool { return len(inflight(c)) == 0 })
	if c.Stats().Entries != 0 {
		t.Fatal("a failed copy was kept")
	}
}

func TestBreakerOpensAndHalfOpens(t *testing.T) {
	var clk clock
	var fail atomic.Bool
	fail.Store(true)
	u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		if fail.Load() {
			http.Error(w, "down", http.StatusBadGateway)
			return
		}
		io.WriteString(w, "up")
	})
	c := newCache(t, clk.config(t.TempDir()))
	o := u.origin(t, 0)
	req := func(i int) site.EdgeRequest { return request(o, fmt.Sprint("/k", i)) }
	for i := range 5 {
		_, _, err := get(t, c, req(i))
		wantCode(t, err, coffer.EUNAVAILABLE)
	}
	_, _, err := get(t, c, req(99))
	wantCode(t, err, coffer.EUNAVAILABLE)
	if u.n.Load() != 5 || c.Stats().BreakerOpens != 1 {
		t.Fatalf("open breaker: %d requests, %+v", u.n.Load(), c.Stats())
	}
	clk.advance(1100 * time.Millisecond) // half-open: one probe, which fails
	get(t, c, req(100))
	get(t, c, req(101))
	if u.n.Load() != 6 {
		t.Fatalf("half-open let %d requests through; want 1 probe", u.n.Load()-5)
	}
	clk.advance(1100 * time.Millisecond) // the cooldown doubled to 2s: still open
	get(t, c, req(102))
	if u.n.Load() != 6 {
		t.Fatal("the cooldown did not grow after a failed probe")
	}
	clk.advance(time.Second)
	fail.Store(false)
	mustGet(t, c, req(103), "up", site.CacheMiss) // the probe succeeds: closed
	mustGet(t, c, req(104), "up", site.CacheMiss)
}

func TestRestartRebuildsTheIndex(t *testing.T) {
	u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, r.URL.Path) })
	dir := t.TempDir()
	c, err := New(testConfig(dir, nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	o := u.origin(t, 0)
	for _, p := range []string{"/a", "/b", "/c"} {
		mustGet(t, c, request(o, p), "/base"+p, site.CacheMiss)
	}
	c.Close()
	os.WriteFile(filepath.Join(dir, "tmp", "fill-123"), []byte("partial"), 0o600)
	os.WriteFile(filepath.Join(dir, "data", "orphan"), []byte("no sidecar"), 0o600)
	var victim string
	names, _ := os.ReadDir(filepath.Join(dir, "data"))
	for _, n := range names {
		if b, _ := os.ReadFile(filepath.Join(dir, "data", n.Name())); string(b) == "/base/c" {
			victim = n.Name()
		}
	}
	os.WriteFile(filepath.Join(dir, "data", victim), []byte("truncated"), 0o600) // size differs

	c2 := newCache(t, testConfig(dir, nil))
	mustGet(t, c2, request(o, "/a"), "/base/a", site.CacheHit)
	mustGet(t, c2, request(o, "/b"), "/base/b", site.CacheHit)
	mustGet(t, c2, request(o, "/c"), "/base/c", site.CacheMiss)
	if u.n.Load() != 4 {
		t.Fatalf("upstream requests = %d; want 4", u.n.Load())
	}
	for _, p := range []string{"tmp/fill-123", "data/orphan", "data/" + victim + ".meta"} {
		if _, err := os.Stat(filepath.Join(dir, p)); err == nil {
			t.Fatalf("%s survived the restart", p)
		}
	}
	if s := c2.Stats(); s.Entries != 3 || s.BytesOnDisk != diskBodies(t, dir) {
		t.Fatalf("stats %+v", s)
	}
}

// TestPurgeScopes: a deleted tenant's sites ("t1/" scopes) lose every entry,
// remembered 404s included; another tenant whose id starts the same ("t10") keeps its.
func TestPurgeScopes(t *testing.T) {
	u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/missing") {
			http.NotFound(w, r)
			return
		}
		io.WriteString(w, r.URL.Path)
	})
	c := newCache(t, testConfig(t.TempDir(), nil))
	o := u.origin(t, 0)
	reqs := map[string]site.EdgeRequest{}
	for _, scope := range []string{"t1/s1", "t1/s2", "t10/s1"} {
		reqs[scope] = site.EdgeRequest{Scope: scope, Path: "/p", Key: "/p", Origin: o}
		mustGet(t, c, reqs[scope], "/base/p", site.CacheMiss)
	}
	_, _, err := get(t, c, site.EdgeRequest{Scope: "t1/s1", Path: "/missing", Key: "/missing", Origin: o})
	wantCode(t, err, coffer.ENOTFOUND)
	if n := c.PurgeScopes("t1/"); n != 3 {
		t.Errorf("PurgeScopes dropped %d; want two pages and a 404", n)
	}
	mustGet(t, c, reqs["t1/s1"], "/base/p", site.CacheMiss)
	mustGet(t, c, reqs["t1/s2"], "/base/p", site.CacheMiss)
	mustGet(t, c, reqs["t10/s1"], "/base/p", site.CacheHit)
}
