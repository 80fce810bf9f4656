package app

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/coffer/coffer/imaging"
	"github.com/coffer/coffer/imaging/remote"
	"github.com/coffer/coffer/metrics"
)

// newRemoteImages returns the engine that sends transformations to the
// coffer-imager workers of --image-workers-remote. Unlike the child, a configured
// remote that cannot be used is an error: the server does not start when the
// addresses, the TLS files or every worker are wrong, rather than answer 501.
func newRemoteImages(c *Config, icfg imaging.Config, log *slog.Logger) (imaging.Engine, error) {
	addrs, err := remote.ParseAddrs(c.ImageWorkersRemote)
	if err != nil {
		return nil, fmt.Errorf("--image-workers-remote: %w", err)
	}
	tlsConf, err := imageWorkersTLS(c)
	if err != nil {
		return nil, err
	}
	wc := remote.DefaultConfig(imagerName)
	wc.Imaging = icfg
	e, err := remote.NewCluster(remote.ClusterConfig{Worker: wc, Addrs: addrs, Secret: []byte(c.ImageWorkersSecret), TLS: tlsConf,
		PingInterval: 5 * time.Second, PingTimeout: 10 * time.Second, Log: log})
	if err != nil {
		return nil, fmt.Errorf("--image-workers-remote: %w", err)
	}
	log.Info("image transformations on remote workers", "workers", c.ImageWorkersRemote, "at_once", icfg.Workers, "formats", formats(e))
	return e, nil
}

// imageWorkersTLS returns the TLS client settings for https:// workers: the CA of
// --image-workers-tls-ca (else the system's roots) and the client certificate of
// --image-workers-tls-cert/--image-workers-tls-key for workers that require one.
func imageWorkersTLS(c *Config) (*tls.Config, error) {
	conf := &tls.Config{MinVersion: tls.VersionTLS13}
	if c.ImageWorkersTLSCA != "" {
		pem, err := os.ReadFile(c.ImageWorkersTLSCA)
		if err != nil {
			return nil, fmt.Errorf("--image-workers-tls-ca: %w", err)
		}
		conf.RootCAs = x509.NewCertPool()
		if !conf.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--image-workers-tls-ca: no PEM certificate in %s", c.ImageWorkersTLSCA)
		}
	}
	if (c.ImageWorkersTLSCert == "") != (c.ImageWorkersTLSKey == "") {
		return nil, fmt.Errorf("--image-workers-tls-cert and --image-workers-tls-key go together")
	}
	if c.ImageWorkersTLSCert != "" {
		cert, err := tls.LoadX509KeyPair(c.ImageWorkersTLSCert, c.ImageWorkersTLSKey)
		if err != nil {
			return nil, fmt.Errorf("--image-workers-tls-cert: %w", err)
		}
		conf.Certificates = []tls.Certificate{cert}
	}
	return conf, nil
}

// ImageWorkers returns the state of the remote image workers, in the order of
// --image-workers-remote; nil when transformations run in a child process or are
// off. (For the management API's server.ImageWorkers.)
func (s *Main) ImageWorkers() []remote.WorkerState {
	if c, ok := s.images.(*remote.Cluster); ok {
		return c.Workers()
	}
	return nil
}

// remoteWorkerStats returns the per-worker metrics source of e, nil unless e sends
// transformations to remote workers.
func remoteWorkerStats(e imaging.Engine) func() []metrics.ImageWorker {
	c, ok := e.(*remote.Cluster)
	if !ok {
		return nil
	}
	return func() []metrics.ImageWorker {
		states := c.Workers()
		out := make([]metrics.ImageWorker, len(states))
		for i, s := range states {
			out[i] = metrics.ImageWorker{Addr: s.Addr, Up: s.Healthy, InFlight: int64(s.InFlight), Transforms: s.Transforms, Failures: s.FailuresTotal}
		}
		return out
	}
}
