package cache

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coffer/coffer"

	"github.com/coffer/coffer/blob"
	"github.com/coffer/coffer/blob/fsblob"
	"github.com/coffer/coffer/blob/memblob"
)

func TestContentCache(t *testing.T) {
	store := blob.New(memblob.New())
	ctx := context.Background()
	data := []byte("0123456789")
	if _, err := store.Put(ctx, "f/aa/x", bytes.NewReader(data), int64(len(data))); err != nil {
		t.Fatal(err)
	}
	big := bytes.Repeat([]byte("b"), 100)
	if _, err := store.Put(ctx, "f/aa/big", bytes.NewReader(big), int64(len(big))); err != nil {
		t.Fatal(err)
	}
	c, err := NewContent(store, ContentConfig{MaxBytes: 1 << 20, MaxFile: 50})
	if err != nil {
		t.Fatal(err)
	}
	for i, wantHit := range []bool{false, true, true} {
		calls := store.Calls()
		r, hit, err := c.Open(ctx, "f/aa/x", int64(len(data)))
		if err != nil || hit != wantHit {
			t.Fatalf("open %d: hit %v err %v", i, hit, err)
		}
		if got, _ := io.ReadAll(r); !bytes.Equal(got, data) || r.Attrs().Size != 10 {
			t.Fatalf("open %d: %q", i, got)
		}
		if wantHit && store.Calls() != calls {
			t.Fatal("a hit called the blob store")
		}
	}
	// A hit hands out its bytes without copying (blob.BytesReader, tested in blob).
	r, _, _ := c.Open(ctx, "f/aa/x", 10)
	r.Seek(3, io.SeekStart)
	if m, ok := r.(interface{ NextBytes(int64) []byte }); !ok || string(m.NextBytes(4)) != "3456" {
		t.Fatalf("a hit's reader %T does not hand out its bytes", r)
	}
	// Above MaxFile: streamed from the store every time.
	for range 2 {
		if _, hit, err := c.Open(ctx, "f/aa/big", 100); hit || err != nil {
			t.Fatalf("big file: hit %v err %v", hit, err)
		}
	}
	// A blob whose size differs from the metadata is an error, not cached.
	store.Put(ctx, "f/aa/y", bytes.NewReader(data), int64(len(data)))
	if _, _, err := c.Open(ctx, "f/aa/y", 9); err == nil {
		t.Fatal("size mismatch accepted")
	}
	if _, _, err := c.Open(ctx, "f/aa/missing", 5); err == nil {
		t.Fatal("missing blob opened")
	}
}

// Blobs on disk from sendfileMin up are held as open files: readers read them at
// their own offsets, and the file is closed only when the cache and every reader
// have let go.
func TestContentCacheFiles(t *testing.T) {
	d, err := fsblob.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	store := blob.New(d)
	ctx := context.Background()
	data := bytes.Repeat([]byte("0123456789abcdef"), sendfileMin/16+3)
	store.Put(ctx, "f/aa/x", bytes.NewReader(data), int64(len(data)))
	c, err := NewContent(store, ContentConfig{MaxBytes: 1 << 20, MaxFile: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	open := func(wantHit bool) *fileReader {
		r, hit, err := c.Open(ctx, "f/aa/x", int64(len(data)))
		fr, ok := r.(*fileReader)
		if err != nil || hit != wantHit || !ok {
			t.Fatalf("open: %T hit %v err %v", r, hit, err)
		}
		return fr
	}
	r1 := open(false)
	calls := store.Calls()
	r2 := open(true)
	if store.Calls() != calls {
		t.Fatal("a hit called the blob store")
	}
	r2.Seek(5, io.SeekStart)
	if got, _ := io.ReadAll(r2); !bytes.Equal(got, data[5:]) {
		t.Fatal("read from offset 5 differs")
	}
	if got, _ := io.ReadAll(r1); !bytes.Equal(got, data) || r1.Attrs().Size != int64(len(data)) {
		t.Fatal("second reader's contents differ")
	}
	f, off, _ := r1.SendFile()
	if off != int64(len(data)) {
		t.Fatalf("SendFile offset %d", off)
	}
	c.Forget("f/aa/x")
	r2.Close()
	if _, err := f.Stat(); err != nil {
		t.Fatal("file closed while a reader holds it")
	}
	r1.Close()
	r1.Close() // twice is harmless
	if _, err := f.Stat(); err == nil {
		t.Fatal("file still open after the cache and every reader let go")
	}
	open(false) // forgotten: loaded again
}

// hookDriver runs hook once, after its next Open succeeded.
type hookDriver struct {
	blob.Driver
	hook func()
}

func (d *hookDriver) Open(ctx context.Context, key string) (blob.Reader, error) {
	r, err := d.Driver.Open(ctx, key)
	if h := d.hook; h != nil && err == nil {
		d.hook = nil
		h()
	}
	return r, err
}

// openFDs counts this process's descriptors open on dir and files under it.
func openFDs(t *testing.T, dir string) int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd:", err)
	}
	n := 0
	for _, e := range ents {
		if l, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); err == nil && strings.HasPrefix(l, dir) {
			n++
		}
	}
	return n
}

// A blob deleted (and forgotten) while a GET loads it into the cache: otter drops
// that load without a deletion event and loads again (which finds the blob gone), so
// Open itself must close the file the dropped load opened, or the deleted file stays
// open, its disk space taken, until a garbage collection.
func TestForgetDuringLoadClosesFile(t *testing.T) {
	dir := t.TempDir()
	fd, err := fsblob.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	d := &hookDriver{Driver: fd}
	store := blob.New(d)
	ctx := context.Background()
	data := bytes.Repeat([]byte("z"), sendfileMin+1000)
	c, err := NewContent(store, ContentConfig{MaxBytes: 1 << 20, MaxFile: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	store.Put(ctx, "f/aa/gone", bytes.NewReader(data), int64(len(data)))
	base := openFDs(t, dir) // the store's own (its root directory)
	d.hook = func() {       // the service's deleteBlob, while the load holds the open file
		store.Delete(ctx, "f/aa/gone")
		c.Forget("f/aa/gone")
	}
	if _, _, err := c.Open(ctx, "f/aa/gone", int64(len(data))); coffer.ErrorCode(err) != coffer.ENOTFOUND {
		t.Fatalf("open of a blob deleted during its load: %v, want ENOTFOUND", err)
	}
	if n := openFDs(t, dir) - base; n != 0 || c.WeightedSize() != 0 {
		t.Fatalf("%d descriptors on the deleted blob stay open; the cache holds %d bytes", n, c.WeightedSize())
	}
	// An ordinary load stays cached and open after its reader closes.
	store.Put(ctx, "f/aa/kept", bytes.NewReader(data), int64(len(data)))
	r, _, err := c.Open(ctx, "f/aa/kept", int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	if n := r.(*fileReader).Shared().Refs(); n != 1 || openFDs(t, dir)-base != 1 {
		t.Fatalf("a cached file has %d references and %d descriptors after its reader closed, want 1 and 1", n, openFDs(t, dir)-base)
	}
}

// TestContentCacheOpenFilesBySlot: an open file weighs a slot of the cache, not its
// size, so a cache of 1 MB keeps 150 files of 20 KB open (3 MB on disk) when it has
// room for 200 descriptors; weighed by size it kept about 50 and a round-robin over
// the 150 missed every time.
func TestContentCacheOpenFilesBySlot(t *testing.T) {
	d, err := fsblob.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	store := blob.New(d)
	ctx := context.Background()
	data := bytes.Repeat([]byte("z"), 20<<10)
	const n = 150
	for i := range n {
		if _, err := store.Put(ctx, fmt.Sprintf("f/aa/%03d", i), bytes.NewReader(data), int64(len(data))); err != nil {
			t.Fatal(err)
		}
	}
	c, err := NewContent(store, ContentConfig{MaxBytes: 1 << 20, MaxFile: 1 << 20, MaxOpenFiles: 200})
	if err != nil {
		t.Fatal(err)
	}
	hits := 0
	for round := range 3 {
		for i := range n {
			r, hit, err := c.Open(ctx, fmt.Sprintf("f/aa/%03d", i), int64(len(data)))
			if err != nil {
				t.Fatal(err)
			}
			r.Close()
			if hit && round == 2 {
				hits++
			}
		}
	}
	if hits < n*9/10 {
		t.Fatalf("third round over %d open files: %d hits, want nearly all", n, hits)
	}
}
