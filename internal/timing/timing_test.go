package timing

import (
	"context"
	"testing"
	"time"
)

func TestHeader(t *testing.T) {
	r := &Recorder{}
	ctx := NewContext(context.Background(), r)
	FromContext(ctx).Add("auth", 12*time.Microsecond, "")
	Note(ctx, "meta-cache", "hit")
	r.Add("blob-open", 1500*time.Microsecond, "disk")
	want := `auth;dur=0.012, meta-cache;desc="hit", blob-open;dur=1.5;desc="disk"`
	if got := r.Header(); got != want {
		t.Fatalf("Header() = %q, want %q", got, want)
	}
	for range 20 {
		r.Note("x", "")
	}
	if r.n != maxEntries {
		t.Fatalf("%d entries, bound %d", r.n, maxEntries)
	}
}

func TestNoRecorder(t *testing.T) {
	ctx := context.Background()
	Since(ctx, "meta", time.Now()) // must not panic
	Note(ctx, "x", "y")
	if h := FromContext(ctx).Header(); h != "" {
		t.Fatalf("Header() = %q", h)
	}
}

// A context type can carry a Recorder in its own Value method.
type ownCtx struct {
	context.Context
	r Recorder
}

func (c *ownCtx) Value(key any) any {
	if IsKey(key) {
		return &c.r
	}
	return c.Context.Value(key)
}

func TestIsKey(t *testing.T) {
	c := &ownCtx{Context: context.Background()}
	Note(c, "x", "")
	if c.r.n != 1 || IsKey(struct{}{}) {
		t.Fatalf("recorder not found through Value: %d entries", c.r.n)
	}
}
