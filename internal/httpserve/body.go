package httpserve

import (
	"errors"
	"io"
	"math"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/coffer/coffer/blob"
)

// Body is a request body that counts its bytes for the metrics and, when Idle > 0,
// gives every read Idle time to make progress: a client that stops sending is cut
// off instead of pinning a goroutine and a connection. At the end of the body the
// read deadline is cleared (the server's own background read must not time out).
type Body struct {
	io.ReadCloser
	N    int64               // bytes read
	Err  error               // the first read error but EOF: the client left, or its body stalled
	W    http.ResponseWriter // the request's writer, to set read deadlines through
	Idle time.Duration       // the longest wait for each read; 0: none
}

// Read reads from the body under the idle deadline.
func (c *Body) Read(p []byte) (int, error) {
	if c.Idle > 0 {
		c.setReadDeadline(time.Now().Add(c.Idle))
	}
	n, err := c.ReadCloser.Read(p)
	c.N += int64(n)
	if err != nil && err != io.EOF && c.Err == nil && !errors.Is(err, http.ErrBodyReadAfterClose) {
		c.Err = err
	}
	if err == io.EOF && c.Idle > 0 { // a stalled body keeps its deadline, so the server's drain fails too
		c.setReadDeadline(time.Time{})
		c.Idle = 0
	}
	return n, err
}

// setReadDeadline sets the connection's read deadline through W.
func (c *Body) setReadDeadline(t time.Time) {
	if d, ok := c.W.(interface{ SetReadDeadline(time.Time) error }); ok {
		_ = d.SetReadDeadline(t)
		return
	}
	_ = http.NewResponseController(c.W).SetReadDeadline(t)
}

// WriteFrom writes r's bytes to w, whose header is written, keeping sendfile for
// files on disk. For other sources it avoids the standard library's fallback, which
// allocates a 32 KB buffer per response: contents already in memory go out in one
// write, streams through a pooled buffer. conn is the request's connection
// (ConnOf), nil if none; over it a header and a body in memory or a blob.FileSender
// leave together.
func WriteFrom(w http.ResponseWriter, conn *Conn, r io.Reader) (int64, error) {
	switch src := sourceOf(r); {
	case src.mem != nil:
		m, err := WriteBatched(w, conn, src.mem.NextBytes(src.limit))
		return int64(m), err
	case src.file, src.sendfile:
		if rf, ok := w.(io.ReaderFrom); ok {
			return ReadFromBatched(rf, conn, r, src.sendfile)
		}
	}
	buf := copyBufs.Get().(*[]byte)
	n, err := io.CopyBuffer(writerOnly{w}, r, *buf)
	copyBufs.Put(buf)
	return n, err
}

// byteSource is a reader over bytes in memory that can hand out its next n bytes
// without copying (the content cache's readers).
type byteSource interface{ NextBytes(n int64) []byte }

// source is what WriteFrom knows about a body's reader.
type source struct {
	mem      byteSource
	limit    int64
	file     bool // an *os.File: sendfile applies
	sendfile bool // a blob.FileSender: Conn sends it with sendfile
}

// sourceOf looks through the io.LimitedReader that http.ServeContent wraps bodies in.
func sourceOf(r io.Reader) source {
	limit := int64(math.MaxInt64)
	if lr, ok := r.(*io.LimitedReader); ok {
		r, limit = lr.R, lr.N
	}
	switch v := r.(type) {
	case byteSource:
		return source{mem: v, limit: limit}
	case *os.File:
		return source{file: true}
	case blob.FileSender:
		return source{sendfile: true}
	}
	return source{}
}

// copyBufs lend WriteFrom its copy buffers.
var copyBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}
