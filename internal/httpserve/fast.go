package httpserve

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/netip"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
)

// The HTTP/1.1 fast path. net/http costs about 1.2-1.7x nginx's CPU per cached
// 100 KB GET on this hardware before coffer does anything (docs/benchmarks/hotpath-floor.md: "net/http's
// floor"): a request map, a response header map cloned and sorted, a background read
// goroutine, several deadline updates per request. FastServer answers the hottest
// requests (a face's FastHandler: for /v1, a GET or HEAD of a file) on the
// connection's own goroutine from a strictly parsed head (fastparse.go) with a
// header block written in one go, and hands every other connection to net/http at
// the first request it does not serve, with that request's bytes, so net/http reads
// it as if it had been first. Once handed off, a connection stays with net/http.

// FastHandler answers requests on the fast path.
type FastHandler interface {
	// ServeFast answers req through w and returns true, or returns false having
	// written nothing: the connection, req included, then goes to net/http. A
	// declined request is served again from the start, so what ServeFast does
	// before answering must be safe to repeat (reads, caches).
	ServeFast(req *FastRequest, w *FastWriter) bool
}

// FastHandlerFunc is a function as a FastHandler.
type FastHandlerFunc func(req *FastRequest, w *FastWriter) bool

// ServeFast calls f(req, w).
func (f FastHandlerFunc) ServeFast(req *FastRequest, w *FastWriter) bool { return f(req, w) }

// FastServer serves connections from a listener on the fast path and passes the
// others, through Fallback, to an http.Server.
type FastServer struct {
	handler FastHandler
	ln      net.Listener
	log     *slog.Logger
	// Between requests a connection waits at most idle; a request head must arrive
	// within header of its first byte (http.Server's IdleTimeout and ReadHeaderTimeout).
	idle, header time.Duration
	fallback     *handoffListener
	closing      atomic.Bool
	answered     atomic.Int64 // requests answered
	handedOff    atomic.Int64 // connections passed to net/http
	mu           sync.Mutex
	conns        map[*fastConn]struct{} // the connections on the fast path
}

// NewFastServer returns the fast path over ln (a Listener's: only its *Conn
// connections take the fast path) for h, with http.Server's idle and read-header
// timeouts. Serve the returned server's Fallback with the http.Server.
func NewFastServer(ln net.Listener, h FastHandler, idle, header time.Duration, log *slog.Logger) *FastServer {
	return &FastServer{handler: h, ln: ln, log: log, idle: idle, header: header,
		fallback: newHandoffListener(ln.Addr()), conns: map[*fastConn]struct{}{}}
}

// Fallback is the listener the http.Server serves: the connections the fast path
// passes on, each starting with the bytes it had read and not served.
func (s *FastServer) Fallback() net.Listener { return s.fallback }

// Stats returns how many requests the fast path answered and how many connections it
// handed to net/http.
func (s *FastServer) Stats() (answered, handedOff int64) {
	return s.answered.Load(), s.handedOff.Load()
}

// Serve accepts connections until the listener is closed (Shutdown): it then returns
// net.ErrClosed. An accept error that is not fatal (too many open files) is waited
// out as net/http does.
func (s *FastServer) Serve() error {
	var wait time.Duration
	for {
		c, err := s.ln.Accept()
		if err != nil {
			if s.closing.Load() || errors.Is(err, net.ErrClosed) {
				return net.ErrClosed
			}
			wait = min(max(2*wait, 5*time.Millisecond), time.Second)
			s.log.Warn("accept failed; retrying", "err", err, "wait", wait.String())
			time.Sleep(wait)
			continue
		}
		wait = 0
		bc, ok := c.(*Conn)
		if !ok {
			go s.fallback.pass(c)
			continue
		}
		fc := &fastConn{srv: s, c: bc, headStart: time.Now()}
		fc.ctx, fc.cancel = context.WithCancel(context.Background())
		fc.req.ctx = fc.ctx
		if ta, ok := bc.RemoteAddr().(*net.TCPAddr); ok {
			ap := ta.AddrPort()
			fc.req.Peer = netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
		}
		fc.w.conn, fc.w.closing = bc, &s.closing
		if !s.track(fc) {
			bc.Close()
			continue
		}
		go fc.serve()
	}
}

// track adds fc to the connections served, unless the server is shutting down.
func (s *FastServer) track(fc *fastConn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing.Load() {
		return false
	}
	s.conns[fc] = struct{}{}
	return true
}

// forget removes fc from the connections served.
func (s *FastServer) forget(fc *fastConn) {
	s.mu.Lock()
	delete(s.conns, fc)
	s.mu.Unlock()
}

// Shutdown stops accepting, closes the connections waiting for a request, lets the
// others finish the request they serve (their answer says Connection: close) and
// waits for them until ctx ends; then it closes what is left and returns ctx's error.
// The http.Server serving Fallback is shut down on its own.
func (s *FastServer) Shutdown(ctx context.Context) error {
	s.closing.Store(true)
	_ = s.ln.Close()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		if s.closeIdle() == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			s.closeAll()
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// closeIdle closes the connections waiting for a request and returns how many
// connections are left.
func (s *FastServer) closeIdle() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	for fc := range s.conns {
		if fc.idle.Load() {
			_ = fc.c.Close()
		}
	}
	return len(s.conns)
}

// closeAll closes every connection on the fast path and cancels the work of their
// requests in flight.
func (s *FastServer) closeAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for fc := range s.conns {
		fc.cancel()
		_ = fc.c.Close()
	}
}

// fastConn is a connection on the fast path, served by one goroutine.
type fastConn struct {
	srv  *FastServer
	c    *Conn
	idle atomic.Bool // waiting for the first byte of a request
	req  FastRequest
	w    FastWriter
	// headStart is when the request head being read began: its first byte, or for the
	// first request the connection's accept, as net/http times it.
	headStart time.Time
	served    bool // a request was answered: between requests the idle timeout applies
	// ctx is the context of the connection's requests, cancelled when it ends.
	ctx    context.Context
	cancel context.CancelFunc
}

// serve reads and answers requests until the connection ends or is handed off.
func (fc *fastConn) serve() {
	defer fc.recover()
	buf := make([]byte, fastBufSize)
	r, w := 0, 0
	for {
		res, n := parseIncomplete, 0
		if w > r {
			res, n = parseHead(buf[r:w], &fc.req)
		}
		switch res {
		case parseOK:
			if !fc.answer() {
				fc.handOff(buf[r:w])
				return
			}
			fc.srv.answered.Add(1)
			fc.served = true
			if r += n; r == w {
				r, w = 0, 0
			} else {
				fc.headStart = time.Now() // the next head (pipelined) is timed from now
			}
			if fc.w.close || fc.w.err != nil || fc.srv.closing.Load() {
				fc.end()
				return
			}
		case parseDecline:
			fc.handOff(buf[r:w])
			return
		case parseIncomplete:
			var ok bool
			if r, w, ok = fc.read(buf, r, w); !ok {
				return
			}
		}
	}
}

// answer has the handler answer the parsed request.
func (fc *fastConn) answer() bool {
	fc.req.Start = time.Now()
	fc.w.reset(&fc.req)
	return fc.srv.handler.ServeFast(&fc.req, &fc.w)
}

// read reads more of a request head into buf[w:], first moving what is left of it
// (buf[r:w]) to the front. It returns the new bounds, or ok false when the
// connection ended or was handed off (a head longer than buf: net/http's).
func (fc *fastConn) read(buf []byte, r, w int) (int, int, bool) {
	if r > 0 {
		w = copy(buf, buf[r:w])
		r = 0
	}
	if w == len(buf) {
		fc.handOff(buf[:w])
		return 0, 0, false
	}
	between := w == 0 && fc.served
	if between {
		fc.idle.Store(true)
		if fc.srv.closing.Load() {
			fc.end()
			return 0, 0, false
		}
		_ = fc.c.SetReadDeadline(deadlineAfter(time.Now(), fc.srv.idle))
	} else {
		_ = fc.c.SetReadDeadline(deadlineAfter(fc.headStart, fc.srv.header))
	}
	m, err := fc.c.Read(buf[w:])
	fc.idle.Store(false)
	if between {
		fc.headStart = time.Now()
	}
	if err != nil {
		fc.end()
		return 0, 0, false
	}
	return r, w + m, true
}

// deadlineAfter is the deadline d after t, rounded up to a whole second: deadlines
// that change only once a second leave the connection's timer alone for most requests
// (Conn skips setting a deadline it already has), and are so up to a second later
// than asked. A d of 0 is no deadline, as for http.Server.
func deadlineAfter(t time.Time, d time.Duration) time.Time {
	if d <= 0 {
		return time.Time{}
	}
	return roundUp(t.Add(d))
}

// roundUp is t rounded up to a whole second.
func roundUp(t time.Time) time.Time { return t.Truncate(time.Second).Add(time.Second) }

// handOff passes the connection to net/http with pending, the bytes read and not
// served (a head, whole or begun), as the first it reads. Deadlines set here are
// cleared, but net/http's for reading that head is held to the one the fast path
// gave it, so that a head trickled in does not get the header timeout twice.
func (fc *fastConn) handOff(pending []byte) {
	fc.srv.forget(fc)
	fc.srv.handedOff.Add(1)
	fc.cancel()
	_ = fc.c.SetDeadline(time.Time{})
	if d := deadlineAfter(fc.headStart, fc.srv.header); !d.IsZero() {
		fc.c.headLimit.Store(d.UnixNano())
	}
	fc.c.pending = append([]byte(nil), pending...)
	fc.srv.fallback.pass(fc.c)
}

// end closes the connection.
func (fc *fastConn) end() {
	fc.srv.forget(fc)
	fc.cancel()
	_ = fc.c.Close()
}

// recover ends the connection after a handler's panic, as net/http does, logging it
// with its stack.
func (fc *fastConn) recover() {
	if v := recover(); v != nil {
		fc.srv.log.Error("panic on the fast path", "value", v, "stack", string(debug.Stack()))
		fc.end()
	}
}

// handoffListener is the listener net/http serves: Accept returns the connections
// the fast path passes on.
type handoffListener struct {
	addr net.Addr
	ch   chan net.Conn
	done chan struct{}
	once sync.Once
}

func newHandoffListener(addr net.Addr) *handoffListener {
	return &handoffListener{addr: addr, ch: make(chan net.Conn), done: make(chan struct{})}
}

// pass hands c to Accept, or closes it if the listener is closed.
func (l *handoffListener) pass(c net.Conn) {
	select {
	case l.ch <- c:
	case <-l.done:
		_ = c.Close()
	}
}

func (l *handoffListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.ch:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *handoffListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *handoffListener) Addr() net.Addr { return l.addr }
