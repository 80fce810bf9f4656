package cache

import (
	"bytes"
	"context"
	"io"
	"testing"

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
	// NextBytes hands out the bytes from the current position, bounded by n and the end.
	r, _, _ := c.Open(ctx, "f/aa/x", 10)
	r.Seek(3, io.SeekStart)
	m := r.(*memReader)
	if got := string(m.NextBytes(4)); got != "3456" {
		t.Fatalf("NextBytes(4) = %q", got)
	}
	if got := string(m.NextBytes(100)); got != "789" {
		t.Fatalf("NextBytes(100) = %q", got)
	}
	if got := m.NextBytes(1); len(got) != 0 {
		t.Fatalf("NextBytes at the end = %q", got)
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
