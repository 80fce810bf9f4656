package fsblob

import (
	"io"
	"sync"
)

// copyBufSize is the size of the buffers writes go through: a 1 GiB put is 1,024
// write(2) calls instead of 32,768 of io.Copy's 32 KiB (or 262,144 when the source,
// like a multipart part, yields 4 KiB per Read).
const copyBufSize = 1 << 20

// copyBufs holds copy buffers between puts, so concurrent small puts do not each
// allocate a MiB.
var copyBufs = sync.Pool{New: func() any { b := make([]byte, copyBufSize); return &b }}

// copyFull copies r to w until r's EOF, in writes of copyBufSize bytes (the last one
// shorter): it fills the buffer from any number of short Reads before each Write.
// It returns the bytes written and the first error other than io.EOF (an
// io.ErrUnexpectedEOF from r, such as a truncated multipart body, is an error).
func copyFull(w io.Writer, r io.Reader) (int64, error) {
	bp := copyBufs.Get().(*[]byte)
	defer copyBufs.Put(bp)
	buf := *bp
	var total int64
	for {
		n, rerr := fill(r, buf)
		if n > 0 {
			m, werr := w.Write(buf[:n])
			total += int64(m)
			if werr != nil {
				return total, werr
			}
		}
		if rerr == io.EOF {
			return total, nil
		}
		if rerr != nil {
			return total, rerr
		}
	}
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
