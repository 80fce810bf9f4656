package imagingtest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// CA is a certificate authority made for one test of TLS between servers and
// image workers (coffer-imager --listen with --tls-*).
type CA struct {
	Cert *x509.Certificate
	Key  *ecdsa.PrivateKey
	Pool *x509.CertPool // holds Cert
	next int64          // serial of the next certificate
}

// NewCA returns a CA valid for an hour.
func NewCA() *CA {
	key := must(ecdsa.GenerateKey(elliptic.P256(), rand.Reader))
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "coffer test CA"}, IsCA: true,
		BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	cert := must(x509.ParseCertificate(must(x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key))))
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &CA{Cert: cert, Key: key, Pool: pool, next: 2}
}

// Issue returns a certificate for 127.0.0.1, for servers and clients alike.
func (ca *CA) Issue() tls.Certificate {
	key := must(ecdsa.GenerateKey(elliptic.P256(), rand.Reader))
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(ca.next), Subject: pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}, KeyUsage: x509.KeyUsageDigitalSignature}
	ca.next++
	der := must(x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.Key))
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// WriteCA writes the CA certificate as PEM into dir and returns its path.
func (ca *CA) WriteCA(dir string) string {
	p := filepath.Join(dir, "ca.pem")
	writePEM(p, "CERTIFICATE", ca.Cert.Raw)
	return p
}

// WriteIssued issues a certificate and writes it and its key as PEM into dir as
// NAME.pem and NAME-key.pem, returning their paths.
func (ca *CA) WriteIssued(dir, name string) (certPath, keyPath string) {
	c := ca.Issue()
	certPath, keyPath = filepath.Join(dir, name+".pem"), filepath.Join(dir, name+"-key.pem")
	writePEM(certPath, "CERTIFICATE", c.Certificate[0])
	writePEM(keyPath, "EC PRIVATE KEY", must(x509.MarshalECPrivateKey(c.PrivateKey.(*ecdsa.PrivateKey))))
	return certPath, keyPath
}

func writePEM(path, typ string, der []byte) {
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		panic(err)
	}
}

// must panics on err: the package's helpers fail only on a bug or a full disk.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
