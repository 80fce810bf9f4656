package remote

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"io"
	"log/slog"
	"math/big"
	"net"
	"strings"
	"testing"
	"time"
)

// testCA is a certificate authority made for one test.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pool *x509.CertPool
}

func newTestCA(t *testing.T) *testCA {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"}, IsCA: true,
		BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &testCA{cert: cert, key: key, pool: pool}
}

// issue returns a certificate for 127.0.0.1 usable by servers and clients.
func (ca *testCA) issue(t *testing.T, serial int64) tls.Certificate {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}, KeyUsage: x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

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
	ca, other := newTestCA(t), newTestCA(t)
	cfg := testListenConfig(nil)
	cfg.TLS = &tls.Config{Certificates: []tls.Certificate{ca.issue(t, 2)}, ClientCAs: ca.pool,
		ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS13}
	a, logs := listenInProcess(t, cfg, 2)
	a.TLS = true
	c, err := tlsCluster(t, a, &tls.Config{RootCAs: ca.pool, Certificates: []tls.Certificate{ca.issue(t, 3)}})
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range transformAll(c, 4, "over tls") {
		if err != nil {
			t.Fatal(err)
		}
	}
	for name, conf := range map[string]*tls.Config{
		"no client certificate":            {RootCAs: ca.pool},
		"client certificate of another CA": {RootCAs: ca.pool, Certificates: []tls.Certificate{other.issue(t, 4)}},
		"worker certificate not trusted":   {RootCAs: other.pool, Certificates: []tls.Certificate{ca.issue(t, 5)}},
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
	if n := strings.Count(logs.String(), "refused an unauthenticated connection"); n < 4 {
		t.Errorf("%d refusals logged, want 4:\n%s", n, logs.String())
	}
}
