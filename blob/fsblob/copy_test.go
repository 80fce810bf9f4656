package fsblob

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"testing/iotest"
)

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
			src := io.MultiReader(iotest.HalfReader(bytes.NewReader(make([]byte, 3*copyBufSize+5))), &errReader{c.err})
			n, err := copyFull(&w, src)
			if err != c.want || n != 3*copyBufSize+5 {
				t.Fatalf("copyFull = %d, %v; want %d, %v", n, err, 3*copyBufSize+5, c.want)
			}
			if w.writes != 4 {
				t.Errorf("%d writes, want 4 (3 full buffers and the rest)", w.writes)
			}
		})
	}
}

var errBroken = errors.New("broken")

type errReader struct{ err error }

func (r *errReader) Read([]byte) (int, error) { return 0, r.err }

type countingWriter struct{ writes int }

func (w *countingWriter) Write(p []byte) (int, error) { w.writes++; return len(p), nil }
