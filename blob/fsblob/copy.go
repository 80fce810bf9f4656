package fsblob

import (
	"io"
	"sync"
)

// Writes go through pooled buffers: a put that fits in smallCopyBufSize is one write,
// a larger one continues in copyBufSize writes, so a 1 GiB put is 1,024 write(2) calls
// instead of 32,768 of io.Copy's 32 KiB (or 262,144 when the source, like a multipart
// part, yields 4 KiB per Read), and many small puts at once do not each hold a MiB.
const (
	smallCopyBufSize = 128 << 10
	copyBufSize      = 1 << 20
)

// smallCopyBufs and copyBufs hold copy buffers between puts.
var (
	smallCopyBufs = sync.Pool{New: func() any { b := make([]byte, smallCopyBufSize); return &b }}
	copyBufs      = sync.Pool{New: func() any { b := make([]byte, copyBufSize); return &b }}
)

// copyFull copies r to w until r's EOF: into a smallCopyBufSize buffer first, then, if
// r has more, in writes of copyBufSize bytes (the last one shorter); each buffer is
// filled from any number of short Reads before its Write. It returns the bytes written
// and the first error other than io.EOF (an io.ErrUnexpectedEOF from r, such as a
// truncated multipart body, is an error).
func copyFull(w io.Writer, r io.Reader) (int64, error) {
	total, more, err := copyWith(&smallCopyBufs, w, r, 1)
	if !more || err != nil {
		return total, err
	}
	n, _, err := copyWith(&copyBufs, w, r, -1)
	return total + n, err
}

// copyWith copies r to w through a buffer from pool, at most rounds buffers (< 0: no
// limit). more reports that r may hold more (it was not at EOF).
func copyWith(pool *sync.Pool, w io.Writer, r io.Reader, rounds int) (total int64, more bool, err error) {
	bp := pool.Get().(*[]byte)
	defer pool.Put(bp)
	buf := *bp
	for ; rounds != 0; rounds-- {
		n, rerr := fill(r, buf)
		if n > 0 {
			m, werr := w.Write(buf[:n])
			total += int64(m)
			if werr != nil {
				return total, false, werr
			}
		}
		if rerr == io.EOF {
			return total, false, nil
		}
		if rerr != nil {
			return total, false, rerr
		}
	}
	return total, true, nil
}

// fill reads from r into buf until buf is full or r fails; unlike io.ReadFull it
// returns r's error as it is (io.EOF after a partial fill too).
func fill(r io.Reader, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		m, err := r.Read(buf[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}
