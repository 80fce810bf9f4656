package cache

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/coffer/coffer/blob"
	"github.com/coffer/coffer/blob/memblob"
	"github.com/coffer/coffer/imaging"
)

func newVariants(t *testing.T, store *blob.Store, cfg VariantConfig) *Variants {
	t.Helper()
	v, err := NewVariants(store, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func countVariants(t *testing.T, store *blob.Store, fileID string) int {
	n := 0
	store.List(context.Background(), imaging.VariantPrefix+fileID+"/", func(blob.Attrs) error { n++; return nil })
	return n
}

func TestVariantTiers(t *testing.T) {
	store := blob.New(memblob.New())
	ctx := context.Background()
	var made atomic.Int32
	produce := func(s string) func(context.Context) ([]byte, error) {
		return func(context.Context) ([]byte, error) { made.Add(1); return []byte(s), nil }
	}
	v := newVariants(t, store, DefaultVariantConfig())
	const id = "0b7e3a0e-6b8f-4d8e-9d1e-2f3a4b5c6d7e"
	for _, want := range []string{"made", "memory", "memory"} {
		b, where, err := v.Get(ctx, id, `"e1"`, "w=10", produce("v1"))
		if err != nil || string(b) != "v1" || where != want {
			t.Fatalf("Get: %q %s %v, want v1 from %s", b, where, err, want)
		}
	}
	// A new process (empty memory) finds it in the blob store.
	v2 := newVariants(t, store, DefaultVariantConfig())
	if b, where, _ := v2.Get(ctx, id, `"e1"`, "w=10", produce("other")); string(b) != "v1" || where != "store" {
		t.Fatalf("after restart: %q from %s", b, where)
	}
	// Another etag (the file was replaced) is another variant.
	if b, where, _ := v.Get(ctx, id, `"e2"`, "w=10", produce("v2")); string(b) != "v2" || where != "made" {
		t.Fatalf("new etag: %q from %s", b, where)
	}
	if made.Load() != 2 {
		t.Fatalf("made %d variants, want 2", made.Load())
	}
	v.Forget(ctx, id)
	if n := countVariants(t, store, id); n != 0 {
		t.Fatalf("%d variants persisted after Forget", n)
	}
	if _, where, _ := v.Get(ctx, id, `"e1"`, "w=10", produce("v1")); where != "made" {
		t.Fatalf("after Forget: from %s", where)
	}
}

func TestVariantLimits(t *testing.T) {
	store := blob.New(memblob.New())
	ctx := context.Background()
	cfg := DefaultVariantConfig()
	cfg.MaxPerFile, cfg.MaxVariant = 2, 5
	v := newVariants(t, store, cfg)
	const id = "0b7e3a0e-6b8f-4d8e-9d1e-2f3a4b5c6d7e"
	for _, p := range []string{"w=1", "w=2", "w=3"} {
		if _, _, err := v.Get(ctx, id, `"e"`, p, func(context.Context) ([]byte, error) { return []byte("x"), nil }); err != nil {
			t.Fatal(err)
		}
	}
	if n := countVariants(t, store, id); n != 2 {
		t.Fatalf("%d variants persisted, cap 2", n)
	}
	for _, want := range []string{"made", "made"} { // too big: neither tier keeps it
		b, where, err := v.Get(ctx, id, `"e"`, "big", func(context.Context) ([]byte, error) { return []byte("123456"), nil })
		if err != nil || string(b) != "123456" || where != want {
			t.Fatalf("big variant: %q %s %v", b, where, err)
		}
	}
}

func TestVariantMadeOnce(t *testing.T) {
	v := newVariants(t, blob.New(memblob.New()), DefaultVariantConfig())
	var made atomic.Int32
	var wg sync.WaitGroup
	start := make(chan struct{})
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			v.Get(context.Background(), "0b7e3a0e-6b8f-4d8e-9d1e-2f3a4b5c6d7e", `"e"`, "w=1", func(context.Context) ([]byte, error) {
				made.Add(1)
				return []byte("x"), nil
			})
		}()
	}
	close(start)
	wg.Wait()
	if made.Load() != 1 {
		t.Fatalf("8 concurrent misses made the variant %d times", made.Load())
	}
}
