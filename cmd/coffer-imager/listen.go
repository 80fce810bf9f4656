package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/coffer/coffer/imaging"
	"github.com/coffer/coffer/imaging/remote"
)

// secretEnv holds the shared secret, so that it need not be on the command line
// (where ps shows it).
const secretEnv = "COFFER_IMAGER_SECRET"

// netFlags are the flags of a worker that listens on the network.
type netFlags struct {
	listen      string
	secret      string
	insecure    bool
	maxConns    int
	maxRequests int
	// maxHandshakes and handshakeTimeout bound the connections that have not
	// authenticated yet (imaging/remote/preauth.go).
	maxHandshakes    int
	handshakeTimeout time.Duration
	tlsCert          string
	tlsKey           string
	tlsClientCA      string
}

// addNetFlags defines the network flags on fs.
func addNetFlags(fs *flag.FlagSet) *netFlags {
	n := &netFlags{}
	fs.StringVar(&n.listen, "listen", "", "serve servers on the network at this address (e.g. 127.0.0.1:9100) instead of a parent over stdin/stdout")
	fs.StringVar(&n.secret, "secret", "", "shared secret servers must prove (HMAC challenge-response; never sent); default $"+secretEnv)
	fs.BoolVar(&n.insecure, "insecure", false, "allow --listen without a secret or client certificates; only on a loopback address")
	fs.IntVar(&n.maxConns, "max-conns", 64, "authenticated servers connected at once; one more is closed after its handshake")
	fs.IntVar(&n.maxHandshakes, "max-handshakes", 16, fmt.Sprintf("connections in their handshake (not yet authenticated, not counted in --max-conns) at once; "+
		"beyond, a new one closes the oldest of the address holding the most (1 to %d)", remote.MaxHandshakesLimit))
	fs.DurationVar(&n.handshakeTimeout, "handshake-timeout", 3*time.Second, fmt.Sprintf("a connection that has not authenticated within this (TLS included) is closed (at most %v)",
		remote.HandshakeTimeoutLimit))
	fs.IntVar(&n.maxRequests, "max-requests", 0, "transformations held at once over all servers, running or waiting with their source; beyond, 503 at once; 0 = 4 x --workers")
	fs.StringVar(&n.tlsCert, "tls-cert", "", "serve over TLS with this certificate (PEM) ...")
	fs.StringVar(&n.tlsKey, "tls-key", "", "... and this key (PEM)")
	fs.StringVar(&n.tlsClientCA, "tls-client-ca", "", "require servers' TLS client certificates signed by this CA (PEM): mTLS; needs --tls-cert")
	return n
}

// validate checks that the network flags go together.
func (n *netFlags) validate() error {
	if n.listen == "" {
		if n.insecure || n.tlsCert != "" || n.tlsKey != "" || n.tlsClientCA != "" {
			return errors.New("--insecure and --tls-* need --listen")
		}
		return nil
	}
	if (n.tlsCert == "") != (n.tlsKey == "") {
		return errors.New("--tls-cert and --tls-key go together")
	}
	if n.tlsClientCA != "" && n.tlsCert == "" {
		return errors.New("--tls-client-ca needs --tls-cert and --tls-key")
	}
	if n.maxConns < 1 || n.maxRequests < 0 {
		return errors.New("--max-conns must be positive and --max-requests not negative")
	}
	if n.maxHandshakes < 1 || n.maxHandshakes > remote.MaxHandshakesLimit {
		return fmt.Errorf("--max-handshakes must be 1 to %d, not %d", remote.MaxHandshakesLimit, n.maxHandshakes)
	}
	if n.handshakeTimeout <= 0 || n.handshakeTimeout > remote.HandshakeTimeoutLimit {
		return fmt.Errorf("--handshake-timeout must be positive and at most %v, not %v", remote.HandshakeTimeoutLimit, n.handshakeTimeout)
	}
	return nil
}

// listenConfig turns the flags into remote.ListenConfig, loading the TLS files.
func (n *netFlags) listenConfig(ic imaging.Config, log *slog.Logger) (remote.ListenConfig, error) {
	secret := n.secret
	if secret == "" {
		secret = os.Getenv(secretEnv)
	}
	c := remote.ListenConfig{Secret: []byte(secret), Insecure: n.insecure, MaxConns: n.maxConns, MaxHandshakes: n.maxHandshakes, MaxRequests: n.maxRequests,
		HandshakeTimeout: n.handshakeTimeout, DrainTimeout: ic.Timeout + 5*time.Second, MaxSource: ic.MaxSourceBytes, Log: log}
	if c.MaxRequests == 0 {
		c.MaxRequests = 4 * ic.Workers
	}
	if n.tlsCert == "" {
		return c, nil
	}
	cert, err := tls.LoadX509KeyPair(n.tlsCert, n.tlsKey)
	if err != nil {
		return c, fmt.Errorf("--tls-cert/--tls-key: %w", err)
	}
	c.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS13}
	if n.tlsClientCA != "" {
		pem, err := os.ReadFile(n.tlsClientCA)
		if err != nil {
			return c, fmt.Errorf("--tls-client-ca: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return c, fmt.Errorf("--tls-client-ca: no PEM certificate in %s", n.tlsClientCA)
		}
		c.TLS.ClientCAs, c.TLS.ClientAuth = pool, tls.RequireAndVerifyClientCert
	}
	return c, nil
}

// listen serves e on --listen until SIGINT or SIGTERM, then drains: the requests
// it holds are answered (for up to --timeout plus 5 s), new ones get 503.
func listen(cfg config, e imaging.Engine, log *slog.Logger) error {
	lc, err := cfg.net.listenConfig(cfg.imaging, log)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.net.listen)
	if err != nil {
		return err
	}
	if err := lc.Validate(ln.Addr()); err != nil {
		ln.Close()
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	log.Info("listening for servers", "addr", ln.Addr().String(), "tls", lc.TLS != nil, "mtls", lc.TLS != nil && lc.TLS.ClientCAs != nil,
		"secret", len(lc.Secret) > 0, "workers", cfg.imaging.Workers, "max_requests", lc.MaxRequests,
		"max_conns", lc.MaxConns, "max_handshakes", lc.MaxHandshakes, "handshake_timeout", lc.HandshakeTimeout.String())
	return remote.ServeListener(ctx, ln, e, lc)
}
