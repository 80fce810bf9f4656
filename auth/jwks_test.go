package auth

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coffer/coffer"
	"github.com/golang-jwt/jwt/v5"
)

// jwksServer serves a JWK set that a test can replace; it listens on loopback
// only (httptest binds 127.0.0.1).
type jwksServer struct {
	*httptest.Server
	mu      sync.Mutex
	body    []byte
	fetches atomic.Int32
}

func newJWKSServer(t *testing.T, keys ...map[string]any) *jwksServer {
	t.Helper()
	s := &jwksServer{}
	s.set(t, keys...)
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		s.fetches.Add(1)
		s.mu.Lock()
		body := s.body
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *jwksServer) set(t *testing.T, keys ...map[string]any) {
	b, err := json.Marshal(map[string]any{"keys": keys})
	if err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	s.body = b
	s.mu.Unlock()
}

func (s *jwksServer) secret(t *testing.T) string {
	return secretJSON(t, map[string]any{"jwk_url": s.URL + "/.well-known/jwks.json"})
}

func b64u(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

// jwk returns the public JWK of key (an RSA, ECDSA or Ed25519 public key, or an
// HMAC secret) with kid.
func jwk(t *testing.T, kid string, key any) map[string]any {
	t.Helper()
	m := map[string]any{"kid": kid, "use": "sig"}
	switch k := key.(type) {
	case *rsa.PublicKey:
		m["kty"], m["n"], m["e"] = "RSA", b64u(k.N.Bytes()), b64u(big.NewInt(int64(k.E)).Bytes())
	case *ecdsa.PublicKey:
		e, err := k.ECDH()
		if err != nil {
			t.Fatal(err)
		}
		raw := e.Bytes()[1:] // uncompressed point: 0x04 || X || Y
		n := len(raw) / 2
		m["kty"], m["crv"], m["x"], m["y"] = "EC", k.Curve.Params().Name, b64u(raw[:n]), b64u(raw[n:])
	case ed25519.PublicKey:
		m["kty"], m["crv"], m["x"] = "OKP", "Ed25519", b64u(k)
	case []byte:
		m["kty"], m["k"] = "oct", b64u(k)
	default:
		t.Fatalf("jwk: unsupported key %T", key)
	}
	return m
}

func TestJWKSKidLookup(t *testing.T) {
	k := testKeys(t)
	srv := newJWKSServer(t,
		jwk(t, "rsa", &k.rsa.PublicKey),
		jwk(t, "ec", &k.ec256.PublicKey),
		jwk(t, "ed", k.ed.Public()),
		jwk(t, "sym", []byte(testHMAC)),
	)
	a := newTestAuth(t, srv.secret(t))
	good := []struct {
		name string
		tok  string
	}{
		{"RS256", sign(t, jwt.SigningMethodRS256, k.rsa, hasuraClaims(), "rsa")},
		{"PS384", sign(t, jwt.SigningMethodPS384, k.rsa, hasuraClaims(), "rsa")},
		{"ES256", sign(t, jwt.SigningMethodES256, k.ec256, hasuraClaims(), "ec")},
		{"EdDSA", sign(t, jwt.SigningMethodEdDSA, k.ed, hasuraClaims(), "ed")},
		{"no kid", sign(t, jwt.SigningMethodES256, k.ec256, hasuraClaims(), "")},
	}
	for _, c := range good {
		if p, err := a.Principal(request(c.tok, "")); err != nil || p.Role != "user" {
			t.Errorf("%s: %+v, %v", c.name, p, err)
		}
	}
	bad := []struct {
		name, tok, msg string
	}{
		{"unknown kid", sign(t, jwt.SigningMethodRS256, k.rsa, hasuraClaims(), "nope"), "unknown key id"},
		{"kid of another key", sign(t, jwt.SigningMethodRS256, k.rsa2, hasuraClaims(), "rsa"), "signature is invalid"},
		{"kid of a key of another type", sign(t, jwt.SigningMethodRS256, k.rsa, hasuraClaims(), "ec"), "another type"},
		{"HS256 with the JWKS oct key", sign(t, jwt.SigningMethodHS256, []byte(testHMAC), hasuraClaims(), "sym"), "not allowed"},
		{"RS256 naming the oct key", sign(t, jwt.SigningMethodRS256, k.rsa, hasuraClaims(), "sym"), "another type"},
		{"HS256 signed with the RSA modulus", sign(t, jwt.SigningMethodHS256, k.rsa.N.Bytes(), hasuraClaims(), "rsa"), "not allowed"},
		{"alg none", sign(t, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, hasuraClaims(), "rsa"), "not allowed"},
		{"no kid, no key fits", sign(t, jwt.SigningMethodRS256, k.rsa2, hasuraClaims(), ""), "signature is invalid"},
		{"expired", sign(t, jwt.SigningMethodRS256, k.rsa, jwt.MapClaims{"exp": testNow.Unix() - 1}, "rsa"), "expired"},
	}
	for _, c := range bad {
		_, err := a.Principal(request(c.tok, ""))
		if coffer.ErrorCode(err) != coffer.EUNAUTHORIZED || !strings.Contains(coffer.ErrorMessage(err), c.msg) {
			t.Errorf("%s: %v; want EUNAUTHORIZED %q", c.name, err, c.msg)
		}
	}
}

// TestJWKSRotation: the server starts serving a new key; a token with the new kid
// is accepted after the refresh it triggers, and the removed key stops working.
func TestJWKSRotation(t *testing.T) {
	k := testKeys(t)
	srv := newJWKSServer(t, jwk(t, "k1", &k.rsa.PublicKey))
	a := newTestAuth(t, srv.secret(t))
	tok1 := sign(t, jwt.SigningMethodRS256, k.rsa, hasuraClaims(), "k1")
	tok2 := sign(t, jwt.SigningMethodRS256, k.rsa2, hasuraClaims(), "k2")
	if _, err := a.Principal(request(tok1, "")); err != nil {
		t.Fatalf("k1 before rotation: %v", err)
	}
	srv.set(t, jwk(t, "k2", &k.rsa2.PublicKey))
	if _, err := a.Principal(request(tok2, "")); err != nil {
		t.Fatalf("k2 after rotation: %v", err)
	}
	if _, err := a.Principal(request(tok1, "")); coffer.ErrorCode(err) != coffer.EUNAUTHORIZED {
		t.Fatalf("k1 after it was removed: %v", err)
	}
	// Unknown kids refresh at most once per interval: more of them cost no fetches.
	before := srv.fetches.Load()
	for i := 0; i < 20; i++ {
		tok := sign(t, jwt.SigningMethodRS256, k.rsa, hasuraClaims(), "random-"+string(rune('a'+i)))
		if _, err := a.Principal(request(tok, "")); coffer.ErrorCode(err) != coffer.EUNAUTHORIZED {
			t.Fatalf("random kid: %v", err)
		}
	}
	if n := srv.fetches.Load(); n != before || n != 2 {
		t.Errorf("fetches = %d (before the random kids %d), want 2: initial + one refresh", n, before)
	}
}

// TestJWKSUnreachable: a JWKS that cannot be fetched does not stop startup;
// tokens are refused as unauthorized, never as internal errors.
func TestJWKSUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close() // nothing listens there any more (loopback)
	a := newTestAuth(t, secretJSON(t, map[string]any{"jwk_url": url}))
	tok := sign(t, jwt.SigningMethodRS256, testKeys(t).rsa, hasuraClaims(), "k1")
	if _, err := a.Principal(request(tok, "")); coffer.ErrorCode(err) != coffer.EUNAUTHORIZED {
		t.Fatalf("got %v, want EUNAUTHORIZED", err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal("second Close:", err)
	}
}

func TestJWKSTypeRestriction(t *testing.T) {
	k := testKeys(t)
	srv := newJWKSServer(t, jwk(t, "rsa", &k.rsa.PublicKey), jwk(t, "ec", &k.ec256.PublicKey))
	a := newTestAuth(t, secretJSON(t, map[string]any{"jwk_url": srv.URL, "type": "ES256"}))
	if _, err := a.Principal(request(sign(t, jwt.SigningMethodES256, k.ec256, hasuraClaims(), "ec"), "")); err != nil {
		t.Errorf("ES256: %v", err)
	}
	_, err := a.Principal(request(sign(t, jwt.SigningMethodRS256, k.rsa, hasuraClaims(), "rsa"), ""))
	if coffer.ErrorCode(err) != coffer.EUNAUTHORIZED {
		t.Errorf("RS256 with type ES256: %v", err)
	}
}

// recordingTransport counts the requests it carries.
type recordingTransport struct{ n atomic.Int32 }

func (r *recordingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	r.n.Add(1)
	return http.DefaultTransport.RoundTrip(req)
}

// TestJWKSTransport: a "jwk_url" key set is fetched through Config.JWKSTransport
// when given (a tenant's: the SSRF guard's), and tokens verify with it.
func TestJWKSTransport(t *testing.T) {
	k := testKeys(t)
	srv := newJWKSServer(t, jwk(t, "rsa", &k.rsa.PublicKey))
	rt := &recordingTransport{}
	cfg := DefaultConfig()
	cfg.JWTSecret, cfg.JWKSTransport = srv.secret(t), rt
	a, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	if rt.n.Load() == 0 {
		t.Fatal("the key set was not fetched through JWKSTransport")
	}
	now := time.Now()
	tok := sign(t, jwt.SigningMethodRS256, k.rsa, jwt.MapClaims{"iat": now.Unix(), "exp": now.Add(time.Hour).Unix(), DefaultClaimsNamespace: map[string]any{
		"x-hasura-default-role": "user", "x-hasura-allowed-roles": []string{"user"}, "x-hasura-user-id": "u1"}}, "rsa")
	if p, err := a.Principal(request(tok, "")); err != nil || p.UserID != "u1" {
		t.Errorf("token through the transport's keys: %+v, %v", p, err)
	}
}
