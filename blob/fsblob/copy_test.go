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

// failingWriter fails its write number failAt (counting from 1), having written
// nothing of it; it records every byte it took.
type failingWriter struct {
	writes, failAt int
	got            bytes.Buffer
}

func (w *failingWriter) Write(p []byte) (int, error) {
	w.writes++
	if w.writes == w.failAt {
		return 0, errBroken
	}
	return w.got.Write(p)
}

// TestCopyFullWriteErrors: a write failing in the pipelined part stops the copy with
// that error, counting only the bytes written before it, in order; no write follows.
func TestCopyFullWriteErrors(t *testing.T) {
	data := make([]byte, smallCopyBufSize+4*copyBufSize+7)
	for i := range data {
		data[i] = byte(i * 31)
	}
	for failAt := 1; failAt <= 6; failAt++ {
		w := &failingWriter{failAt: failAt}
		n, err := copyFull(w, iotest.HalfReader(bytes.NewReader(data)))
		if err != errBroken || n != int64(w.got.Len()) || !bytes.Equal(w.got.Bytes(), data[:n]) || w.writes != failAt {
			t.Errorf("fail at write %d: copyFull = %d, %v after %d writes, %d bytes taken", failAt, n, err, w.writes, w.got.Len())
		}
	}
}
