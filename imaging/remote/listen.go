package remote

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
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
	// MaxConns is how many connections are served at once; more are closed at once.
	MaxConns int
	// MaxRequests is how many requests the worker holds at once, over all
	// connections, running or waiting for the engine (each holds its source, up to
	// MaxSource bytes): beyond it a request is answered with EUNAVAILABLE at once,
	// so N servers cannot make one worker hold N queues of sources.
	MaxRequests int
	// HandshakeTimeout bounds the handshake of a new connection.
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
		if !l.add(c) {
			l.log.Warn("too many connections; closing a new one", "remote", c.RemoteAddr().String(), "max", cfg.MaxConns)
			c.Close()
			continue
		}
		l.wg.Add(1)
		go l.serve(c)
	}
}

// listener is the state of ServeListener.
type listener struct {
	cfg    ListenConfig
	engine imaging.Engine
	log    *slog.Logger
	admit  *admission // ListenConfig.MaxRequests places, shared by the connections
	wg     sync.WaitGroup

	mu     sync.Mutex
	conns  map[net.Conn]bool
	closed bool
}

// add registers c unless MaxConns are open or the listener is closing.
func (l *listener) add(c net.Conn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed || len(l.conns) >= l.cfg.MaxConns {
		return false
	}
	l.conns[c] = true
	return true
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
}

// serve authenticates one connection and serves it until the server closes it.
func (l *listener) serve(c net.Conn) {
	defer l.wg.Done()
	defer func() {
		l.mu.Lock()
		delete(l.conns, c)
		l.mu.Unlock()
		c.Close()
	}()
	remote := c.RemoteAddr().String()
	c.SetDeadline(time.Now().Add(l.cfg.HandshakeTimeout))
	if l.cfg.TLS != nil {
		c = tls.Server(c, l.cfg.TLS)
	}
	if err := acceptHandshake(c, l.cfg.Secret, rand.Reader); err != nil {
		l.log.Warn("refused an unauthenticated connection", "remote", remote, "err", err)
		return
	}
	c.SetDeadline(time.Time{})
	l.log.Info("server connected", "remote", remote)
	err := serve(bufio.NewReaderSize(c, ChunkSize), c, l.engine, l.cfg.MaxSource, l.admit, l.log.With("remote", remote))
	l.log.Info("server disconnected", "remote", remote, "err", err)
}
