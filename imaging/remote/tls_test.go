package remote

import (
	"crypto/tls"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/coffer/coffer/imaging/imagingtest"
)

// tlsCluster connects a Cluster to a over TLS with conf and no secret.
func tlsCluster(t *testing.T, a Addr, conf *tls.Config) (*Cluster, error) {
	t.Helper()
	wc := DefaultConfig("unused")
	wc.Imaging.Workers, wc.Imaging.MaxSourceBytes, wc.StartTimeout = 2, 8<<20, 2*time.Second
	c, err := NewCluster(ClusterConfig{Worker: wc, Addrs: []Addr{a}, TLS: conf, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err == nil {
		t.Cleanup(func() { c.Close() })
	}
	return c, err
}

// A worker with mTLS and no secret serves servers with a client certificate of its
// CA, and refuses those without one and those speaking plain TCP.
func TestClusterMutualTLS(t *testing.T) {
	ca, other := imagingtest.NewCA(), imagingtest.NewCA()
	cfg := testListenConfig(nil)
	cfg.TLS = &tls.Config{Certificates: []tls.Certificate{ca.Issue()}, ClientCAs: ca.Pool,
		ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS13}
	a, logs := listenInProcess(t, cfg, 2)
	a.TLS = true
	c, err := tlsCluster(t, a, &tls.Config{RootCAs: ca.Pool, Certificates: []tls.Certificate{ca.Issue()}})
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range transformAll(c, 4, "over tls") {
		if err != nil {
			t.Fatal(err)
		}
	}
	for name, conf := range map[string]*tls.Config{
		"no client certificate":            {RootCAs: ca.Pool},
		"client certificate of another CA": {RootCAs: ca.Pool, Certificates: []tls.Certificate{other.Issue()}},
		"worker certificate not trusted":   {RootCAs: other.Pool, Certificates: []tls.Certificate{ca.Issue()}},
	} {
		if _, err := tlsCluster(t, a, conf); err == nil {
			t.Errorf("%s: connected", name)
		}
	}
	plain := a
	plain.TLS = false
	if _, err := tlsCluster(t, plain, nil); err == nil {
		t.Error("plain TCP to a TLS worker: connected")
	}
	refusals := func() int { return strings.Count(logs.String(), "refused an unauthenticated connection") }
	for deadline := time.Now().Add(5 * time.Second); refusals() < 4 && time.Now().Before(deadline); { // plain TCP: at the handshake timeout
		time.Sleep(10 * time.Millisecond)
	}
	if n := refusals(); n < 4 {
		t.Errorf("%d refusals logged, want 4:\n%s", n, logs.String())
	}
}
