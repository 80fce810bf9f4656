package httpserve

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/coffer/coffer/blob"
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
	if bc, ok := c.(*Conn); ok {
		return context.WithValue(ctx, connKey{}, bc)
	}
	return ctx
}

type connKey struct{}

type batchListener struct{ net.Listener }

func (l batchListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok && err == nil {
		return &Conn{TCPConn: tc}, nil
	}
	return c, err
}

// Conn is a TCP connection from Listener that, while holding, keeps one small write (the
// header flush) and sends it together with the next write in one writev. It is used
// by the one goroutine serving the connection.
type Conn struct {
	*net.TCPConn
	holding bool
	buf     *[holdLimit]byte // from heldBufs while holding a write
	held    []byte           // the held write, in buf; nil if none
	vec     [2][]byte
	bufs    net.Buffers // over vec: a field, so writev allocates nothing
	// readDeadline and writeDeadline are the deadlines last set, as Unix nanoseconds
	// (0: none; -1: unknown).
	readDeadline, writeDeadline atomic.Int64
	// pending are bytes the fast path read and did not serve: Read returns them first.
	pending []byte
	// headLimit, when not 0, is the latest read deadline (Unix nanoseconds) until a
	// zero one is set: net/http's deadline for a head the fast path began reading.
	headLimit atomic.Int64
}

// Read reads what the fast path left (pending), then from the connection.
func (c *Conn) Read(p []byte) (int, error) {
	if len(c.pending) > 0 {
		n := copy(p, c.pending)
		if c.pending = c.pending[n:]; len(c.pending) == 0 {
			c.pending = nil
		}
		return n, nil
	}
	return c.TCPConn.Read(p)
}

// WriteTo writes what the fast path left, then the connection's bytes, to w (the
// TCPConn's own WriteTo would skip pending).
func (c *Conn) WriteTo(w io.Writer) (int64, error) {
	var n int64
	if len(c.pending) > 0 {
		m, err := w.Write(c.pending)
		n, c.pending = int64(m), c.pending[m:]
		if err != nil {
			return n, err
		}
	}
	m, err := c.TCPConn.WriteTo(w)
	return n + m, err
}

// SetReadDeadline sets the read deadline unless it is already t: net/http sets no
// deadline twice in a row for every request (once after the request's header, once
// as its background read starts), and each call costs a timer update.
func (c *Conn) SetReadDeadline(t time.Time) error {
	if lim := c.headLimit.Load(); lim != 0 {
		if t.IsZero() {
			c.headLimit.Store(0) // net/http has read the head
		} else if t.UnixNano() > lim {
			t = time.Unix(0, lim)
		}
	}
	ns := deadlineNanos(t)
	if c.readDeadline.Load() == ns {
		return nil
	}
	if err := c.TCPConn.SetReadDeadline(t); err != nil {
		c.readDeadline.Store(-1) // unknown: the next call sets it
		return err
	}
	c.readDeadline.Store(ns)
	return nil
}

// SetWriteDeadline sets the write deadline unless it is already t.
func (c *Conn) SetWriteDeadline(t time.Time) error {
	ns := deadlineNanos(t)
	if c.writeDeadline.Load() == ns {
		return nil
	}
	if err := c.TCPConn.SetWriteDeadline(t); err != nil {
		c.writeDeadline.Store(-1)
		return err
	}
	c.writeDeadline.Store(ns)
	return nil
}

// SetDeadline sets both deadlines, keeping SetReadDeadline's and SetWriteDeadline's
// records.
func (c *Conn) SetDeadline(t time.Time) error {
	c.readDeadline.Store(-1)
	c.writeDeadline.Store(-1)
	if err := c.TCPConn.SetDeadline(t); err != nil {
		return err
	}
	c.readDeadline.Store(deadlineNanos(t))
	c.writeDeadline.Store(deadlineNanos(t))
	return nil
}

// deadlineNanos is t as SetReadDeadline records it: 0 for no deadline, else its Unix
// nanoseconds (never 0 or -1 for a deadline net/http or coffer sets).
func deadlineNanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// holdLimit is the size of net/http's connection write buffer: a flush of it is the
// write worth holding.
const holdLimit = 4 << 10

func (c *Conn) Write(p []byte) (int, error) {
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

func (c *Conn) putHeld() {
	if c.buf != nil {
		heldBufs.Put(c.buf)
	}
	c.buf, c.held = nil, nil
}

// hold starts holding; release ends it and sends what is still held.
func (c *Conn) hold() { c.holding = true }

func (c *Conn) release() error {
	c.holding = false
	if c.held == nil {
		return nil
	}
	_, err := c.TCPConn.Write(c.held)
	c.putHeld()
	return err
}

// ReadFrom keeps sendfile: net/http finds it on the connection it serves. A
// blob.FileSender (the content cache's open files) goes out with sendfile at its own
// offset, after the held header, which is sent with MSG_MORE so that both share
// segments.
func (c *Conn) ReadFrom(r io.Reader) (int64, error) {
	if lr, ok := r.(*io.LimitedReader); ok {
		if fs, ok := lr.R.(blob.FileSender); ok {
			n, err := c.sendFile(fs, lr.N)
			lr.N -= n
			return n, err
		}
	}
	if err := c.release(); err != nil {
		return 0, err
	}
	return c.TCPConn.ReadFrom(r)
}

// sendFile sends the held bytes (MSG_MORE) and then n bytes of fs with sendfile.
func (c *Conn) sendFile(fs blob.FileSender, n int64) (int64, error) {
	f, off, advance := fs.SendFile()
	sock, err := c.TCPConn.SyscallConn()
	if err != nil {
		return 0, err
	}
	file, err := f.SyscallConn()
	if err != nil {
		return 0, err
	}
	held := c.held
	c.holding = false
	var sent int64
	var serr error
	cerr := file.Control(func(ffd uintptr) {
		serr = sock.Write(func(sfd uintptr) bool {
			var done bool
			held, sent, done, err = sendStep(int(sfd), int(ffd), held, &off, n, sent)
			return done
		})
	})
	c.putHeld()
	advance(sent)
	return sent, errors.Join(err, serr, cerr)
}

// sendStep sends what it can without blocking; done is false when the socket is
// full (the poller waits for it and calls again).
func sendStep(sfd, ffd int, held []byte, off *int64, n, sent int64) ([]byte, int64, bool, error) {
	for len(held) > 0 {
		m, err := syscall.SendmsgN(sfd, held, nil, nil, syscall.MSG_MORE)
		if err == syscall.EAGAIN {
			return held, sent, false, nil
		} else if err != nil && err != syscall.EINTR {
			return held, sent, true, err
		}
		held = held[max(m, 0):]
	}
	for sent < n {
		m, err := syscall.Sendfile(sfd, ffd, off, int(min(n-sent, 1<<30)))
		sent += int64(max(m, 0))
		switch {
		case err == syscall.EAGAIN:
			return held, sent, false, nil
		case err != nil && err != syscall.EINTR:
			return held, sent, true, err
		case err == nil && m == 0:
			return held, sent, true, io.ErrUnexpectedEOF
		}
	}
	return held, sent, true, nil
}

// ConnOf returns the Conn r came over, nil if none or if r is an HTTP/2 stream:
// HTTP/2 multiplexes streams over the connection and writes frames from its own
// goroutine, so holding a write there would mix streams up.
func ConnOf(r *http.Request) *Conn {
	if r.ProtoMajor != 1 {
		return nil
	}
	bc, _ := r.Context().Value(connKey{}).(*Conn)
	return bc
}

// Protocols is http.Server.Protocols for coffer: HTTP/1.1 always, and with h2c also
// HTTP/2 without TLS, by prior knowledge, on the same port. HTTP/2 responses do not
// use sendfile or the batched header write; they are framed by net/http's HTTP/2
// server.
func Protocols(h2c bool) *http.Protocols {
	p := new(http.Protocols)
	p.SetHTTP1(true)
	p.SetUnencryptedHTTP2(h2c)
	return p
}

// ReadFromBatched sends r through rf (the response's ReadFrom, which writes the
// header and hands the body to the connection); for a fileSource over a Conn
// the header is held and leaves with the first file bytes.
func ReadFromBatched(rf io.ReaderFrom, bc *Conn, r io.Reader, sendfile bool) (int64, error) {
	if bc == nil || !sendfile {
		return rf.ReadFrom(r)
	}
	bc.hold()
	n, err := rf.ReadFrom(r)
	if rerr := bc.release(); err == nil {
		err = rerr
	}
	return n, err
}

// WriteBatched writes p, a whole body in memory, through w; over a Conn bc the
// header flush and p leave in one writev.
func WriteBatched(w http.ResponseWriter, bc *Conn, p []byte) (int, error) {
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
