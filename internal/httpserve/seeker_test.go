package httpserve_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/coffer/coffer/blob"
	"github.com/coffer/coffer/blob/fsblob"
	"github.com/coffer/coffer/blob/memblob"
	"github.com/coffer/coffer/internal/httpserve"
)

// TestSeekerOf: a disk blob opened through the blob.Store reaches ServeContent as its
// *os.File (sendfile); any other as the driver's own reader, as before capabilities
// were named.
func TestSeekerOf(t *testing.T) {
	disk, err := fsblob.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []blob.Driver{disk, memblob.New()} {
		st := blob.New(d)
		defer st.Close()
		_, perr := st.Put(context.Background(), "k", strings.NewReader("x"), 1)
		rd, err := st.Open(context.Background(), "k")
		if err = errors.Join(perr, err); err != nil {
			t.Fatal(err)
		}
		defer rd.Close()
		got := httpserve.SeekerOf(rd)
		if _, isFile := got.(*os.File); isFile != (d == blob.Driver(disk)) || got == rd {
			t.Errorf("%T: SeekerOf gave a %T", d, got)
		}
	}
}
