package rpcapi

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"testing"
)

// TestLimitedGzip: a message within the limit decompresses whole; a gzip bomb
// stops with errInflated one byte past the limit, and Reset gives the allowance back.
func TestLimitedGzip(t *testing.T) {
	const max = 1 << 20
	d := &limitedGzip{max: max}
	small := bytes.Repeat([]byte("coffer "), 1000)
	if err := d.Reset(bytes.NewReader(gzipped(t, small))); err != nil {
		t.Fatal(err)
	}
	if got, err := io.ReadAll(d); err != nil || !bytes.Equal(got, small) {
		t.Fatalf("small message: %d bytes, %v", len(got), err)
	}
	bomb := gzipped(t, make([]byte, 64<<20))
	for range 2 {
		if err := d.Reset(bytes.NewReader(bomb)); err != nil {
			t.Fatal(err)
		}
		n, err := io.Copy(io.Discard, d)
		if !errors.Is(err, errInflated) || n != max+1 {
			t.Fatalf("gzip bomb: decompressed %d bytes, %v", n, err)
		}
	}
}

// gzipped compresses b.
func gzipped(t *testing.T, b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil || zw.Close() != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
