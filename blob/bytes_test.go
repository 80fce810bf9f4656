package blob_test

import (
	"io"
	"testing"

	"github.com/coffer/coffer/blob"
)

// TestBytesReader: reads, seeks and NextBytes see the same bytes; NextBytes hands out
// the bytes from the current position, bounded by n and the end.
func TestBytesReader(t *testing.T) {
	r := blob.BytesReader("k", []byte("0123456789"))
	if a := r.Attrs(); a.Key != "k" || a.Size != 10 {
		t.Fatalf("Attrs = %+v", a)
	}
	if _, err := r.Seek(3, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	m, ok := r.(interface{ NextBytes(int64) []byte })
	if !ok {
		t.Fatalf("%T has no NextBytes", r)
	}
	if got := string(m.NextBytes(4)); got != "3456" {
		t.Fatalf("NextBytes(4) = %q", got)
	}
	if got := string(m.NextBytes(100)); got != "789" {
		t.Fatalf("NextBytes(100) = %q", got)
	}
	if got := m.NextBytes(1); len(got) != 0 {
		t.Fatalf("NextBytes at the end = %q", got)
	}
	if _, err := r.Seek(8, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	if rest, err := io.ReadAll(r); err != nil || string(rest) != "89" || r.Close() != nil {
		t.Fatalf("read after seek: %q, %v", rest, err)
	}
}
