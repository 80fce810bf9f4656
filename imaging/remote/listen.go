package remote

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"slices"
	"sync"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/imaging"
)

// ListenConfig says how a coffer-imager serves servers over the network
// (coffer-imager --listen): who may connect and how much work it holds at once.
type ListenConfig struct {
	// Secret is the shared secret servers prove they hold (handshake.go). Empty
	// only with Insecure.
	Secret []byte
	// Insecure allows an empty Secret without TLS client certificates; Validate
	// allows it only on a loopback address.
	Insecure bool
	// TLS, if set, wraps every connection (its ClientAuth and ClientCAs make it
	// mTLS); the handshake then runs inside TLS.
	TLS *tls.Config
	// MaxConns is how many authenticated connections are served at once; a
	// connection that authenticates beyond them is closed. Connections still in
	// their handshake do not count.
	MaxConns int
	// MaxHandshakes is how many connections may be in their handshake at once
	// (preauth.go): beyond, a new connection takes the place of an older one.
	// 1 to MaxHandshakesLimit.
	MaxHandshakes int
	// MaxRequests is how many requests the worker holds at once, over all
	// connections, running or waiting for the engine (each holds its source, up to
	// MaxSource bytes): beyond it a request is answered with EUNAVAILABLE at once,
	// so N servers cannot make one worker hold N queues of sources.
	MaxRequests int
	// HandshakeTimeout bounds the handshake of a new connection (TLS included);
	// at most HandshakeTimeoutLimit.
	HandshakeTimeout time.Duration
	// DrainTimeout is how long a stopping worker waits for the requests it holds to
	// be answered (new ones are answered with EUNAVAILABLE) before it closes the
	// connections; 0 = close at once.
	DrainTimeout time.Duration
	MaxSource    int64        // largest source held (imaging.Config.MaxSourceBytes)
	Log          *slog.Logger // nil = slog.Default()
}

// Validate returns EINVALID for a field out of range, and for a worker reachable by
// others with no way to tell them apart: no secret, no client certificates and not
// both Insecure and a loopback address.
func (c ListenConfig) Validate(addr net.Addr) error {
	if c.MaxConns < 1 || c.MaxRequests < 1 || c.HandshakeTimeout <= 0 || c.MaxSource < 1 {
		return coffer.Errorf(coffer.EINVALID, "image worker listener: MaxConns, MaxRequests, HandshakeTimeout and MaxSource must be positive")
	}
	if c.MaxHandshakes < 1 || c.MaxHandshakes > MaxHandshakesLimit || c.HandshakeTimeout > HandshakeTimeoutLimit {
		return coffer.Errorf(coffer.EINVALID, "image worker listener: MaxHandshakes must be 1 to %d and HandshakeTimeout at most %v",
			MaxHandshakesLimit, HandshakeTimeoutLimit)
	}
	if len(c.Secret) > 0 || (c.TLS != nil && c.TLS.ClientAuth == tls.RequireAndVerifyClientCert) {
		return nil
	}
	if !c.Insecure {
		return coffer.Errorf(coffer.EINVALID, "refusing to listen without authentication: give a shared secret (--secret or COFFER_IMAGER_SECRET) or TLS client certificates (--tls-client-ca)")
	}
	if tcp, ok := addr.(*net.TCPAddr); !ok || !tcp.IP.IsLoopback() {
		return coffer.Errorf(coffer.EINVALID, "--insecure (no secret) is only allowed on a loopback address, not %v", addr)
	}
	return nil
}

// ServeListener accepts servers on ln and serves each connection as Serve serves
// the child's pipes, after the handshake, with e. When ctx ends it stops accepting,
// drains (see DrainTimeout), closes the connections and returns once their requests
// ended; it also returns if ln fails.
func ServeListener(ctx context.Context, ln net.Listener, e imaging.Engine, cfg ListenConfig) error {
	if err := cfg.Validate(ln.Addr()); err != nil {
		return err
	}
	l := &listener{cfg: cfg, engine: e, log: cfg.Log, admit: newAdmission(cfg.MaxRequests), conns: make(map[net.Conn]bool)}
	if l.log == nil {
		l.log = slog.Default()
	}
	stop := context.AfterFunc(ctx, func() { ln.Close(); l.drain(); l.closeAll() })
	defer stop()
	for {
		c, err := ln.Accept()
		if err != nil {
			l.wg.Wait()
			if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return nil
			}
			return err
		}
		p := l.arrive(c)
		if p == nil {
			c.Close()
			continue
		}
		l.wg.Add(1)
		go l.serve(p)
	}
}

// listener is the state of ServeListener.
type listener struct {
	cfg    ListenConfig
	engine imaging.Engine
	log    *slog.Logger
	admit  *admission // ListenConfig.MaxRequests places, shared by the connections
	wg     sync.WaitGroup

	mu      sync.Mutex
	pending []*pending        // in their handshake, oldest first; at most MaxHandshakes
	conns   map[net.Conn]bool // authenticated; at most MaxConns
	closed  bool
}

// arrive registers c as in its handshake, evicting another if MaxHandshakes are
// (preauth.go); nil if the listener is closing.
func (l *listener) arrive(c net.Conn) *pending {
	p := &pending{conn: c, source: sourceOf(c.RemoteAddr())}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	l.pending = append(l.pending, p)
	if len(l.pending) > l.cfg.MaxHandshakes {
		i := victim(l.pending)
		v := l.pending[i]
		l.pending = slices.Delete(l.pending, i, i+1)
		v.evicted = true
		v.conn.Close() // its serve sees the error and logs errEvicted
	}
	return p
}

// authenticated moves p from the handshake budget to MaxConns, or says why not.
func (l *listener) authenticated(p *pending) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.pending = slices.DeleteFunc(l.pending, func(q *pending) bool { return q == p })
	switch {
	case p.evicted:
		return errEvicted
	case l.closed:
		return errStopping
	case len(l.conns) >= l.cfg.MaxConns:
		return errTooMany
	}
	l.conns[p.conn] = true
	return nil
}

// forget drops p, in its handshake or authenticated; it says whether p was evicted.
func (l *listener) forget(p *pending) (evicted bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.pending = slices.DeleteFunc(l.pending, func(q *pending) bool { return q == p })
	delete(l.conns, p.conn)
	return p.evicted
}

// drain refuses new requests and waits up to DrainTimeout for those held to end.
func (l *listener) drain() {
	l.admit.draining.Store(true)
	deadline := time.Now().Add(l.cfg.DrainTimeout)
	for l.admit.held() > 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := l.admit.held(); n > 0 {
		l.log.Warn("stopping with requests still running", "requests", n, "drain_timeout", l.cfg.DrainTimeout.String())
	}
}

// closeAll closes every connection: their serve loops end.
func (l *listener) closeAll() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	for c := range l.conns {
		c.Close()
	}
	for _, p := range l.pending {
		p.conn.Close()
	}
}

// serve authenticates one connection and serves it until the server closes it.
func (l *listener) serve(p *pending) {
	defer l.wg.Done()
	c := p.conn
	defer func() { l.forget(p); c.Close() }()
	remote := c.RemoteAddr().String()
	c.SetDeadline(time.Now().Add(l.cfg.HandshakeTimeout))
	if l.cfg.TLS != nil {
		c = tls.Server(c, l.cfg.TLS)
	}
	if err := acceptHandshake(c, l.cfg.Secret, rand.Reader); err != nil {
		if l.forget(p) {
			err = errEvicted
		}
		l.log.Warn("refused an unauthenticated connection", "remote", remote, "err", err)
		return
	}
	if err := l.authenticated(p); err != nil {
		l.log.Warn("closing a server's connection", "remote", remote, "err", err, "max_conns", l.cfg.MaxConns)
		return
	}
	c.SetDeadline(time.Time{})
	l.log.Info("server connected", "remote", remote)
	err := serve(bufio.NewReaderSize(c, ChunkSize), c, l.engine, l.cfg.MaxSource, l.admit, l.log.With("remote", remote))
	l.log.Info("server disconnected", "remote", remote, "err", err)
}
