package edge

import (
	"context"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/coffer/coffer/internal/openfile"
	"github.com/coffer/coffer/site"
)

// openDescriptors counts the process's descriptors open on files under dir.
func openDescriptors(t *testing.T, dir string) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd")
	}
	n := 0
	for _, e := range ents {
		if target, err := os.Readlink("/proc/self/fd/" + e.Name()); err == nil && strings.HasPrefix(target, dir) {
			n++
		}
	}
	return n
}

// TestHitsShareOneOpenFile: hits of an entry read one open file, each at its own
// offset; it closes when the entry is purged and its last reader is done; over
// MaxOpenFiles, entries do not keep their file.
func TestHitsShareOneOpenFile(t *testing.T) {
	body := strings.Repeat("0123456789", 2000)
	u := newUpstream(t, fixed(body, map[string]string{"Cache-Control": "max-age=3600"}))
	cfg := testConfig(t.TempDir(), nil)
	cfg.MaxOpenFiles = 1
	c := newCache(t, cfg)
	o := u.origin(t, 0)
	a, b := request(o, "/a"), request(o, "/b")
	mustGet(t, c, a, body, site.CacheMiss)
	mustGet(t, c, b, body, site.CacheMiss)
	hit := func(req site.EdgeRequest) *openfile.Reader {
		t.Helper()
		obj, err := c.Get(context.Background(), req)
		if err != nil || obj.Cache != site.CacheHit {
			t.Fatalf("get %s: %v %v", req.Path, obj, err)
		}
		r, ok := obj.Content.(*openfile.Reader)
		if !ok {
			t.Fatalf("a hit's content is %T, not an openfile.Reader", obj.Content)
		}
		return r
	}
	r1, r2 := hit(a), hit(a)
	if r1.Shared() != r2.Shared() || r1.Shared().Refs() != 3 { // a's entry, r1, r2
		t.Fatalf("two hits: shared %v, refs %d", r1.Shared() == r2.Shared(), r1.Shared().Refs())
	}
	// Each reader has its own offset.
	first, _ := io.ReadAll(io.LimitReader(r1, 15))
	if whole, _ := io.ReadAll(r2); string(first) != body[:15] || string(whole) != body {
		t.Fatalf("readers share a position: %q, %d bytes", first, len(whole))
	}
	if f, off, _ := r1.SendFile(); f == nil || off != 15 {
		t.Fatalf("SendFile at %d", off)
	}
	// b is over the budget of one: its hits open the file each time.
	rb1, rb2 := hit(b), hit(b)
	if rb1.Shared() == rb2.Shared() || rb1.Shared().Refs() != 1 {
		t.Fatalf("over the budget: shared %v, refs %d", rb1.Shared() == rb2.Shared(), rb1.Shared().Refs())
	}
	rb1.Close()
	rb2.Close()
	if n := openDescriptors(t, cfg.Dir); n != 1 {
		t.Fatalf("%d descriptors open in the cache's directory, want 1 (a's)", n)
	}
	// A purge drops a's entry: its file stays open for r1 and r2, then closes.
	if n := c.Purge("t1/s1", site.Purge{Paths: []string{"/a"}}); n != 1 {
		t.Fatalf("purged %d", n)
	}
	if r1.Shared().Refs() != 2 {
		t.Fatalf("after the purge: refs %d, want 2 (the readers)", r1.Shared().Refs())
	}
	if rest, err := io.ReadAll(r1); err != nil || string(first)+string(rest) != body {
		t.Fatalf("reading after the purge: %d bytes, %v", len(rest), err)
	}
	r1.Close()
	r2.Close()
	r2.Close() // twice: released once
	if n := openDescriptors(t, cfg.Dir); n != 0 {
		t.Fatalf("%d descriptors still open after the purge and the readers", n)
	}
	// b may keep its file now that a's slot is free.
	hit(b).Close()
	if n := openDescriptors(t, cfg.Dir); n != 1 {
		t.Fatalf("%d descriptors open, want 1 (b's)", n)
	}
	c.Close()
	if n := openDescriptors(t, cfg.Dir); n != 0 {
		t.Fatalf("%d descriptors open after Close", n)
	}
}
