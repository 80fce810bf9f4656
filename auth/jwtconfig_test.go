package auth

import (
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/coffer/coffer"
)

func certPEM(t *testing.T, key *rsa.PrivateKey) string {
	t.Helper()
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "coffer test"},
		NotBefore:    testNow.Add(-time.Hour),
		NotAfter:     testNow.Add(time.Hour),
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

func TestParseJWTConfig(t *testing.T) {
	k := testKeys(t)
	rsPub := pemPublic(t, &k.rsa.PublicKey)
	pkcs1 := string(pem.EncodeToMemory(&pem.Block{Type: "RSA PUBLIC KEY", Bytes: x509.MarshalPKCS1PublicKey(&k.rsa.PublicKey)}))
	good := []map[string]any{
		{"type": "HS256", "key": testHMAC},
		{"type": "HS512", "key": testHMAC, "audience": "a", "issuer": "i", "allowed_skew": 2, "require_exp": false},
		{"type": "RS256", "key": rsPub, "audience": []string{"a", "b"}},
		{"type": "RS256", "key": certPEM(t, k.rsa)},
		{"type": "RS512", "key": pkcs1},
		{"type": "ES256", "key": pemPublic(t, &k.ec256.PublicKey)},
		{"type": "ES384", "key": pemPublic(t, &k.ec384.PublicKey)},
		{"type": "EdDSA", "key": pemPublic(t, k.ed.Public())},
		{"jwk_url": "https://id.example/.well-known/jwks.json"},
		{"jwk_url": "http://127.0.0.1:1/jwks", "type": "RS256", "claims_namespace_path": "$.a['b.c'][0]"},
		{"type": "HS256", "key": testHMAC, "claims_format": "stringified_json", "header": map[string]any{"type": "Authorization"}},
		{"type": "HS256", "key": testHMAC, "claims_map": map[string]any{
			"x-hasura-user-id": "$.sub", "x-hasura-default-role": "user", "x-hasura-allowed-roles": []string{"user"},
			"x-hasura-org": map[string]any{"path": "$.org", "default": nil},
		}},
	}
	for i, f := range good {
		if _, err := ParseJWTConfig(secretJSON(t, f)); err != nil {
			t.Errorf("good[%d]: %v", i, err)
		}
	}
	bad := []struct {
		secret string
		field  string // expected in the message
	}{
		{``, "JSON"},
		{`[]`, "JSON"},
		{`{"type":"HS256","key":"` + testHMAC + `"} x`, "trailing"},
		{`{"type":"HS256","key":"` + testHMAC + `","audiance":"x"}`, "audiance"},
		{`{"type":"HS256","key":42}`, "key"},
		{`{"type":"HS256"}`, "key"},
		{`{"key":"` + testHMAC + `"}`, "type"},
		{`{"type":"none","key":"` + testHMAC + `"}`, "type"},
		{`{"type":"HS256","key":"short"}`, "key"},
		{`{"type":"RS256","key":"` + testHMAC + `"}`, "key"},
		{secretJSON(t, map[string]any{"type": "ES256", "key": rsPub}), "key"},
		{secretJSON(t, map[string]any{"type": "ES384", "key": pemPublic(t, &k.ec256.PublicKey)}), "key"},
		{secretJSON(t, map[string]any{"type": "EdDSA", "key": rsPub}), "key"},
		{secretJSON(t, map[string]any{"type": "RS256", "key": "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"}), "key"},
		{secretJSON(t, map[string]any{"type": "HS256", "key": testHMAC, "jwk_url": "https://x"}), "jwk_url"},
		{`{"jwk_url":"ftp://x/jwks"}`, "jwk_url"},
		{`{"jwk_url":"/jwks"}`, "jwk_url"},
		{`{"jwk_url":"https://x/jwks","type":"HS256"}`, "type"},
		{`{"type":"HS256","key":"` + testHMAC + `","audience":[]}`, "audience"},
		{`{"type":"HS256","key":"` + testHMAC + `","audience":[""]}`, "audience"},
		{`{"type":"HS256","key":"` + testHMAC + `","audience":7}`, "audience"},
		{`{"type":"HS256","key":"` + testHMAC + `","claims_namespace":"a","claims_namespace_path":"$.a"}`, "claims_namespace"},
		{`{"type":"HS256","key":"` + testHMAC + `","claims_namespace":""}`, "claims_namespace"},
		{`{"type":"HS256","key":"` + testHMAC + `","claims_namespace_path":"a.b"}`, "claims_namespace_path"},
		{`{"type":"HS256","key":"` + testHMAC + `","claims_namespace_path":"$.a[x]"}`, "claims_namespace_path"},
		{`{"type":"HS256","key":"` + testHMAC + `","claims_namespace_path":"$.a['b"}`, "claims_namespace_path"},
		{`{"type":"HS256","key":"` + testHMAC + `","claims_format":"xml"}`, "claims_format"},
		{`{"type":"HS256","key":"` + testHMAC + `","allowed_skew":-1}`, "allowed_skew"},
		{`{"type":"HS256","key":"` + testHMAC + `","allowed_skew":"5"}`, "allowed_skew"},
		{`{"type":"HS256","key":"` + testHMAC + `","header":{"type":"Cookie"}}`, "header"},
		{`{"type":"HS256","key":"` + testHMAC + `","claims_map":{"user-id":"$.sub"}}`, "claims_map"},
		{`{"type":"HS256","key":"` + testHMAC + `","claims_map":{"x-hasura-role":"$.r"}}`, "claims_map"},
		{`{"type":"HS256","key":"` + testHMAC + `","claims_map":{"x-hasura-a":"$.a","X-Hasura-A":"$.b"}}`, "claims_map"},
		{`{"type":"HS256","key":"` + testHMAC + `","claims_map":{"x-hasura-a":{"path":"$.a","x":1}}}`, "claims_map"},
		{`{"type":"HS256","key":"` + testHMAC + `","claims_map":{"x-hasura-a":{"default":1}}}`, "claims_map"},
		{`{"type":"HS256","key":"` + testHMAC + `","claims_map":{"x-hasura-a":"$$"}}`, "claims_map"},
		{`{"type":"HS256","key":"` + testHMAC + `","claims_map":{"x-hasura-default-role":1}}`, "claims_map"},
		{`{"type":"HS256","key":"` + testHMAC + `","claims_map":{"x-hasura-allowed-roles":"user"}}`, "claims_map"},
	}
	for _, c := range bad {
		_, err := ParseJWTConfig(c.secret)
		if coffer.ErrorCode(err) != coffer.EINVALID || !strings.Contains(coffer.ErrorMessage(err), c.field) {
			t.Errorf("%.60s: got %v, want EINVALID naming %q", c.secret, err, c.field)
			continue
		}
		if strings.Contains(coffer.ErrorMessage(err), testHMAC) {
			t.Errorf("%.60s: message repeats the key: %v", c.secret, err)
		}
	}
}

func TestJWTConfigStringRedactsKey(t *testing.T) {
	c, err := ParseJWTConfig(hsSecret(t, nil))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{c.String(), fmt.Sprintf("%v %+v %s", c, c, c)} {
		if strings.Contains(s, testHMAC) {
			t.Fatalf("key in %q", s)
		}
	}
}

func TestConfigValidateJWT(t *testing.T) {
	cfg := DefaultConfig()
	cfg.JWTSecret = `{"type":"HS256","key":"short"}`
	if err := cfg.Validate(); coffer.ErrorCode(err) != coffer.EINVALID {
		t.Errorf("Validate: %v", err)
	}
	if _, err := New(cfg); coffer.ErrorCode(err) != coffer.EINVALID {
		t.Errorf("New: %v", err)
	}
}

func TestKeyCurveCheck(t *testing.T) {
	k := testKeys(t)
	if err := keyMatchesAlg("ES256", &k.ec384.PublicKey); err == nil {
		t.Error("P-384 key accepted for ES256")
	}
	if ecCurve("ES512") != elliptic.P521() {
		t.Error("ES512 curve")
	}
	small, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	if err := keyMatchesAlg("RS256", &small.PublicKey); err == nil {
		t.Error("1024-bit RSA key accepted")
	}
}

func TestJSONPath(t *testing.T) {
	doc, _ := decodeJSONValue([]byte(`{"a":{"b.c":[10,{"d":"x"}]},"n":null}`))
	cases := []struct {
		path string
		want any
		ok   bool
	}{
		{"$.a['b.c'][1].d", "x", true},
		{`$["a"]["b.c"][0]`, "10", true},
		{"$.a.x", nil, false},
		{"$.a['b.c'][5]", nil, false},
		{"$.a['b.c'].d", nil, false},
		{"$.n", nil, true},
		{"$.n.x", nil, false},
	}
	for _, c := range cases {
		p, err := parseJSONPath(c.path)
		if err != nil {
			t.Fatalf("%s: %v", c.path, err)
		}
		got, ok := p.lookup(doc)
		if ok != c.ok || (ok && got != nil && sessionValue(got) != c.want) {
			t.Errorf("%s: got %v %v, want %v %v", c.path, got, ok, c.want, c.ok)
		}
	}
	for _, bad := range []string{"", "a", "$.", "$..a", "$[", "$[-1]", "$[+1]", "$['a]", "$['a'x", "$a", "$.a[1"} {
		if _, err := parseJSONPath(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
