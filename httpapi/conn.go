package httpapi

import (
	"context"
	"io"
	"net"
	"net/http"
	"sync"
)

// Listener wraps ln so that a response whose body is already in memory (the
// hot-content cache) leaves in one writev with its header: net/http writes the header
// through a 4 KB buffer that it flushes on its own before the body, which costs a
// second write system call and a separate small TCP segment per response. Serve with
// ConnContext set too, or the wrapping has no effect.
func Listener(ln net.Listener) net.Listener { return batchListener{ln} }

// ConnContext is http.Server.ConnContext for connections from Listener: it lets the
// handler reach the connection it writes to.
func ConnContext(ctx context.Context, c net.Conn) context.Context {
	if bc, ok := c.(*batchConn); ok {
		return context.WithValue(ctx, connKey{}, bc)
	}
	return ctx
}

type connKey struct{}

type batchListener struct{ net.Listener }

func (l batchListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok && err == nil {
		return &batchConn{TCPConn: tc}, nil
	}
	return c, err
}

// batchConn is a TCP connection that, while holding, keeps one small write (the
// header flush) and sends it together with the next write in one writev. It is used
// by the one goroutine serving the connection.
type batchConn struct {
	*net.TCPConn
	holding bool
	buf     *[holdLimit]byte // from heldBufs while holding a write
	held    []byte           // the held write, in buf; nil if none
	vec     [2][]byte
	bufs    net.Buffers // over vec: a field, so writev allocates nothing
}

// holdLimit is the size of net/http's connection write buffer: a flush of it is the
// write worth holding.
const holdLimit = 4 << 10

func (c *batchConn) Write(p []byte) (int, error) {
	if !c.holding {
		return c.TCPConn.Write(p)
	}
	if c.held == nil && len(p) <= holdLimit {
		c.buf = heldBufs.Get().(*[holdLimit]byte)
		c.held = append(c.buf[:0], p...) // the caller reuses p: keep a copy
		return len(p), nil
	}
	c.holding = false
	n := len(c.held)
	c.vec = [2][]byte{c.held, p}
	c.bufs = c.vec[:]
	m, err := c.bufs.WriteTo(c.TCPConn)
	c.vec = [2][]byte{} // no reference to p stays behind
	c.putHeld()
	return int(max(m-int64(n), 0)), err
}

// heldBufs lend the buffer for a held write while a body is written: one per
// connection would cost 4 KB of memory for each idle keep-alive connection.
var heldBufs = sync.Pool{New: func() any { return new([holdLimit]byte) }}

func (c *batchConn) putHeld() {
	if c.buf != nil {
		heldBufs.Put(c.buf)
	}
	c.buf, c.held = nil, nil
}

// hold starts holding; release ends it and sends what is still held.
func (c *batchConn) hold() { c.holding = true }

func (c *batchConn) release() error {
	c.holding = false
	if c.held == nil {
		return nil
	}
	_, err := c.TCPConn.Write(c.held)
	c.putHeld()
	return err
}

// ReadFrom keeps sendfile: net/http finds it on the connection it serves.
func (c *batchConn) ReadFrom(r io.Reader) (int64, error) {
	if err := c.release(); err != nil {
		return 0, err
	}
	return c.TCPConn.ReadFrom(r)
}

// connOf returns the batchConn r came over, nil if none.
func connOf(r *http.Request) *batchConn {
	bc, _ := r.Context().Value(connKey{}).(*batchConn)
	return bc
}

// writeBatched writes p, a whole body in memory, through w; over a batchConn bc the
// header flush and p leave in one writev.
func writeBatched(w http.ResponseWriter, bc *batchConn, p []byte) (int, error) {
	if bc == nil || len(p) <= holdLimit {
		return w.Write(p)
	}
	bc.hold()
	n, err := w.Write(p)
	if rerr := bc.release(); err == nil {
		err = rerr
	}
	return n, err
}
