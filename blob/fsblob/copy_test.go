package fsblob

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"testing/iotest"
)

// TestCopyFullSmall checks that a put that fits the small buffer is one write, and
// an empty one none.
func TestCopyFullSmall(t *testing.T) {
	for _, size := range []int{0, 1, smallCopyBufSize - 1, smallCopyBufSize} {
		var w countingWriter
		n, err := copyFull(&w, iotest.OneByteReader(bytes.NewReader(make([]byte, size))))
		want := min(size, 1)
		if size == smallCopyBufSize {
			want = 1 // full small buffer, then an EOF read into the large one
		}
		if err != nil || n != int64(size) || w.writes != want {
			t.Errorf("size %d: copyFull = %d, %v, %d writes; want %d writes", size, n, err, w.writes, want)
		}
	}
}

// TestCopyFullErrors checks that copyFull treats only io.EOF as the end: a source
// failing with io.ErrUnexpectedEOF (a truncated multipart body) after some bytes, or
// any other error, fails the copy, and short Reads are gathered into full writes.
func TestCopyFullErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
		want error
	}{{"eof", io.EOF, nil}, {"unexpected-eof", io.ErrUnexpectedEOF, io.ErrUnexpectedEOF}, {"other", errBroken, errBroken}} {
		t.Run(c.name, func(t *testing.T) {
			var w countingWriter
			size := smallCopyBufSize + 3*copyBufSize + 5
			src := io.MultiReader(iotest.HalfReader(bytes.NewReader(make([]byte, size))), &errReader{c.err})
			n, err := copyFull(&w, src)
			if err != c.want || n != int64(size) {
				t.Fatalf("copyFull = %d, %v; want %d, %v", n, err, size, c.want)
			}
			if w.writes != 5 {
				t.Errorf("%d writes, want 5 (the small buffer, 3 full large ones and the rest)", w.writes)
			}
		})
	}
}

var errBroken = errors.New("broken")

type errReader struct{ err error }

func (r *errReader) Read([]byte) (int, error) { return 0, r.err }

type countingWriter struct{ writes int }

func (w *countingWriter) Write(p []byte) (int, error) { w.writes++; return len(p), nil }
