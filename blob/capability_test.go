package blob_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/coffer/coffer/blob"
	"github.com/coffer/coffer/blob/fsblob"
	"github.com/coffer/coffer/blob/memblob"
)

// wrapper is a Reader that wraps another, as the content cache or a metrics layer would.
type wrapper struct{ blob.Reader }

func (w wrapper) Unwrap() blob.Reader { return w.Reader }

// nilWrapper unwraps to nothing.
type nilWrapper struct{ blob.Reader }

func (nilWrapper) Unwrap() blob.Reader { return nil }

func TestAsLooksThroughReaderWrappers(t *testing.T) {
	ctx := context.Background()
	d, err := fsblob.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	st := blob.New(d)
	defer st.Close()
	if _, err := st.Put(ctx, "a/b", strings.NewReader("hello"), 5); err != nil {
		t.Fatal(err)
	}
	r, err := st.Open(ctx, "a/b")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, ok := r.(blob.OSFiler); ok {
		t.Fatal("the Store's reader is expected to be a wrapper; this test would prove nothing")
	}
	for name, rd := range map[string]blob.Reader{"store": r, "wrapped twice": wrapper{wrapper{r}}} {
		of, ok := blob.As[blob.OSFiler](rd)
		if !ok || of.OSFile() == nil {
			t.Errorf("%s: As[OSFiler] = %v, %v", name, of, ok)
		}
		if _, ok := blob.Innermost(rd).(*fsblob.Reader); !ok {
			t.Errorf("%s: Innermost = %T", name, blob.Innermost(rd))
		}
	}
	if _, ok := blob.As[blob.FileSender](r); ok {
		t.Error("As found a FileSender that nothing implements")
	}
	if _, ok := blob.As[blob.OSFiler](nilWrapper{r}); ok {
		t.Error("As looked past a wrapper that unwraps to nil")
	}
}

// driverWrapper is a Driver that wraps another, as a tracing or quota layer would.
type driverWrapper struct{ blob.Driver }

func (w driverWrapper) Unwrap() blob.Driver { return w.Driver }

func TestAsFindsDriverCapabilities(t *testing.T) {
	d, err := fsblob.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if sw, ok := blob.As[blob.Sweeper](driverWrapper{driverWrapper{d}}); !ok || sw != blob.Sweeper(d) {
		t.Errorf("As[Sweeper](wrapped fsblob) = %v, %v", sw, ok)
	}
	if _, ok := blob.As[blob.Sweeper](driverWrapper{memblob.New()}); ok {
		t.Error("As[Sweeper] found a sweeper in memblob")
	}
	st := blob.New(memblob.New())
	if n, err := st.SweepTemp(context.Background(), time.Now()); n != 0 || err != nil {
		t.Errorf("SweepTemp without a Sweeper = %d, %v", n, err)
	}
}
