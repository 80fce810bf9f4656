package remote

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/coffer/coffer/imaging"
)

// ImagerName is the image worker's binary, built from cmd/coffer-imager.
const ImagerName = "coffer-imager"

// Setup is what Open needs to choose and start the server's image engine, from the
// settings of coffer serve (the flags named in its errors).
type Setup struct {
	Imaging imaging.Config // the limits (--image-workers, --image-queue, ...)
	Worker  string         // --image-worker: the child's binary; "" looks for ImagerName
	Idle    time.Duration  // --image-worker-idle: stop an idle child after this long
	// Remote lists network workers (--image-workers-remote); non-empty, it replaces
	// the child. Secret, and the TLS files for https:// workers, go with it.
	Remote                 string
	Secret                 []byte
	TLSCA, TLSCert, TLSKey string
	Log                    *slog.Logger
}

// Open returns the image engine Setup describes: with Remote, a Cluster of the
// network workers; else the ImagerName child worker (an Engine, started with the first
// transformation) if it is found and starts, else an engine that answers 501,
// logging once why transformations are off. Invalid limits are an error, and so is a
// configured remote that cannot be used: the server does not start when the
// addresses, the TLS files or every worker are wrong, rather than answer 501.
func Open(s Setup) (imaging.Engine, error) {
	if err := s.Imaging.Validate(); err != nil {
		return nil, fmt.Errorf("image settings: %w", err)
	}
	if s.Idle < 0 {
		return nil, fmt.Errorf("--image-worker-idle must not be negative")
	}
	if s.Remote != "" {
		return openCluster(s)
	}
	path, err := FindImager(s.Worker)
	if err == nil {
		rcfg := DefaultConfig(path)
		rcfg.Imaging, rcfg.Log, rcfg.IdleTimeout = s.Imaging, s.Log, s.Idle
		var e *Engine
		if e, err = New(rcfg); err == nil {
			s.Log.Info("image transformations on", "worker", path, "workers", s.Imaging.Workers, "formats", Formats(e))
			return e, nil
		}
	}
	s.Log.Warn("image transformations are off: transform requests answer 501", "reason", err.Error())
	return imaging.NewDisabled("the image worker " + ImagerName + " is not available"), nil
}

// openCluster returns the Cluster of the workers of s.Remote.
func openCluster(s Setup) (imaging.Engine, error) {
	addrs, err := ParseAddrs(s.Remote)
	if err != nil {
		return nil, fmt.Errorf("--image-workers-remote: %w", err)
	}
	tlsConf, err := s.clientTLS()
	if err != nil {
		return nil, err
	}
	wc := DefaultConfig(ImagerName)
	wc.Imaging = s.Imaging
	e, err := NewCluster(ClusterConfig{Worker: wc, Addrs: addrs, Secret: s.Secret, TLS: tlsConf,
		PingInterval: 5 * time.Second, PingTimeout: 10 * time.Second, Log: s.Log})
	if err != nil {
		return nil, fmt.Errorf("--image-workers-remote: %w", err)
	}
	s.Log.Info("image transformations on remote workers", "workers", s.Remote, "at_once", s.Imaging.Workers, "formats", Formats(e))
	return e, nil
}

// clientTLS returns the TLS client settings for https:// workers: the CA of
// --image-workers-tls-ca (else the system's roots) and the client certificate of
// --image-workers-tls-cert/--image-workers-tls-key for workers that require one.
func (s Setup) clientTLS() (*tls.Config, error) {
	conf := &tls.Config{MinVersion: tls.VersionTLS13}
	if s.TLSCA != "" {
		pem, err := os.ReadFile(s.TLSCA)
		if err != nil {
			return nil, fmt.Errorf("--image-workers-tls-ca: %w", err)
		}
		conf.RootCAs = x509.NewCertPool()
		if !conf.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--image-workers-tls-ca: no PEM certificate in %s", s.TLSCA)
		}
	}
	if (s.TLSCert == "") != (s.TLSKey == "") {
		return nil, fmt.Errorf("--image-workers-tls-cert and --image-workers-tls-key go together")
	}
	if s.TLSCert != "" {
		cert, err := tls.LoadX509KeyPair(s.TLSCert, s.TLSKey)
		if err != nil {
			return nil, fmt.Errorf("--image-workers-tls-cert: %w", err)
		}
		conf.Certificates = []tls.Certificate{cert}
	}
	return conf, nil
}

// FindImager returns the worker binary: flag (--image-worker) if given, else
// ImagerName next to this executable, else on $PATH.
func FindImager(flag string) (string, error) {
	if flag != "" {
		if _, err := os.Stat(flag); err != nil {
			return "", fmt.Errorf("--image-worker: %w", err)
		}
		return flag, nil
	}
	var dir string
	if exe, err := os.Executable(); err == nil {
		dir = filepath.Dir(exe)
		if p := filepath.Join(dir, ImagerName); isExecutable(p) {
			return p, nil
		}
	}
	if p, err := exec.LookPath(ImagerName); err == nil {
		return p, nil
	}
	return "", errors.New("no " + ImagerName + " next to the coffer binary (" + dir + ") nor on $PATH; build it with libvips installed: go build ./cmd/coffer-imager")
}

// isExecutable reports whether p is a regular file with an execute bit.
func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// Formats lists the output formats e writes ("jpeg,png,webp"), for logs.
func Formats(e imaging.Engine) string {
	var out []string
	for _, f := range []imaging.Format{imaging.JPEG, imaging.PNG, imaging.WebP, imaging.AVIF} {
		if e.Supports(f) {
			out = append(out, string(f))
		}
	}
	return strings.Join(out, ",")
}

// Starts returns the worker start counter of e, nil unless e is a child's Engine.
func Starts(e imaging.Engine) func() int64 {
	if r, ok := e.(*Engine); ok {
		return r.Starts
	}
	return nil
}

// Workers returns the state of e's network workers, in the order of its addresses;
// nil unless e is a Cluster.
func Workers(e imaging.Engine) []WorkerState {
	if c, ok := e.(*Cluster); ok {
		return c.Workers()
	}
	return nil
}
