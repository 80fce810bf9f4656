package auth

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coffer/coffer"
	"github.com/golang-jwt/jwt/v5"
)

// testNow is the fixed clock of every JWT test.
var testNow = time.Unix(1_700_000_000, 0)

const testHMAC = "0123456789abcdef0123456789abcdef-test-secret"

// testKeySet holds keys generated once per test binary.
type testKeySet struct {
	rsa, rsa2 *rsa.PrivateKey
	ec256     *ecdsa.PrivateKey
	ec384     *ecdsa.PrivateKey
	ed        ed25519.PrivateKey
}

var (
	keysOnce sync.Once
	keysVal  testKeySet
)

func testKeys(t testing.TB) *testKeySet {
	t.Helper()
	keysOnce.Do(func() {
		must := func(err error) {
			if err != nil {
				panic(err)
			}
		}
		var err error
		keysVal.rsa, err = rsa.GenerateKey(rand.Reader, 2048)
		must(err)
		keysVal.rsa2, err = rsa.GenerateKey(rand.Reader, 2048)
		must(err)
		keysVal.ec256, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		must(err)
		keysVal.ec384, err = ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
		must(err)
		_, keysVal.ed, err = ed25519.GenerateKey(rand.Reader)
		must(err)
	})
	return &keysVal
}

// pemPublic returns the PKIX PEM form of pub.
func pemPublic(t testing.TB, pub any) string {
	t.Helper()
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
}

// secretJSON builds a JWT secret from fields.
func secretJSON(t testing.TB, fields map[string]any) string {
	t.Helper()
	b, err := json.Marshal(fields)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func hsSecret(t testing.TB, extra map[string]any) string {
	f := map[string]any{"type": "HS256", "key": testHMAC}
	for k, v := range extra {
		f[k] = v
	}
	return secretJSON(t, f)
}

// newTestAuth returns an authenticator with the admin secret "admin-secret",
// jwtSecret and the fixed test clock.
func newTestAuth(t testing.TB, jwtSecret string) *Authenticator {
	t.Helper()
	cfg := DefaultConfig()
	cfg.AdminSecret = "admin-secret"
	cfg.JWTSecret = jwtSecret
	cfg.Logger = slog.New(slog.DiscardHandler)
	a, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { a.Close() })
	if a.jwt != nil {
		a.jwt.now = func() time.Time { return testNow }
	}
	return a
}

// hasuraClaims returns valid claims: user (default) and editor allowed.
func hasuraClaims() jwt.MapClaims {
	return jwt.MapClaims{
		"sub": "u1",
		"iat": testNow.Add(-time.Minute).Unix(),
		"exp": testNow.Add(time.Hour).Unix(),
		DefaultClaimsNamespace: map[string]any{
			"x-hasura-default-role":  "user",
			"x-hasura-allowed-roles": []string{"user", "editor"},
			"x-hasura-user-id":       "u1",
			"X-Hasura-Org-Id":        42,
			"x-hasura-tags":          []any{"a", "b c", 7},
			"x-hasura-flag":          true,
			"other":                  "ignored",
		},
	}
}

func sign(t testing.TB, m jwt.SigningMethod, key any, claims jwt.MapClaims, kid string) string {
	t.Helper()
	tok := jwt.NewWithClaims(m, claims)
	if kid != "" {
		tok.Header["kid"] = kid
	}
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatalf("sign: %v", err)
	}
	return s
}

func request(token, role string) *http.Request {
	r := httptest.NewRequest(http.MethodGet, "/v1/files/x", nil)
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	if role != "" {
		r.Header.Set(HeaderRole, role)
	}
	return r
}

func TestJWTAlgorithms(t *testing.T) {
	k := testKeys(t)
	cases := []struct {
		alg     string
		key     string
		signKey any
	}{
		{"HS256", testHMAC, []byte(testHMAC)},
		{"HS384", testHMAC, []byte(testHMAC)},
		{"HS512", testHMAC, []byte(testHMAC)},
		{"RS256", pemPublic(t, &k.rsa.PublicKey), k.rsa},
		{"RS384", pemPublic(t, &k.rsa.PublicKey), k.rsa},
		{"RS512", pemPublic(t, &k.rsa.PublicKey), k.rsa},
		{"PS256", pemPublic(t, &k.rsa.PublicKey), k.rsa},
		{"ES256", pemPublic(t, &k.ec256.PublicKey), k.ec256},
		{"ES384", pemPublic(t, &k.ec384.PublicKey), k.ec384},
		{"EdDSA", pemPublic(t, k.ed.Public()), k.ed},
	}
	for _, c := range cases {
		t.Run(c.alg, func(t *testing.T) {
			a := newTestAuth(t, secretJSON(t, map[string]any{"type": c.alg, "key": c.key}))
			tok := sign(t, jwt.GetSigningMethod(c.alg), c.signKey, hasuraClaims(), "")
			p, err := a.Principal(request(tok, ""))
			if err != nil {
				t.Fatalf("valid %s token refused: %v", c.alg, err)
			}
			if p.Role != "user" || p.UserID != "u1" || p.Admin || p.Anonymous {
				t.Errorf("principal = %+v", p)
			}
		})
	}
}

func TestJWTPrincipal(t *testing.T) {
	a := newTestAuth(t, hsSecret(t, nil))
	tok := sign(t, jwt.SigningMethodHS256, []byte(testHMAC), hasuraClaims(), "")
	p, err := a.Principal(request(tok, "editor"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"x-hasura-role":    "editor",
		"x-hasura-user-id": "u1",
		"x-hasura-org-id":  "42",
		"x-hasura-tags":    `{a,"b c",7}`,
		"x-hasura-flag":    "true",
	}
	if p.Role != "editor" || p.UserID != "u1" || len(p.Session) != len(want) {
		t.Fatalf("principal = %+v", p)
	}
	for k, v := range want {
		if p.Session[k] != v {
			t.Errorf("Session[%s] = %q, want %q", k, p.Session[k], v)
		}
	}
}

// badCase is one token that must be refused with code.
type badCase struct {
	name   string
	secret string // "" = HS256 default
	token  func(t *testing.T) string
	role   string
	code   string
	msg    string // substring of the message, optional
}

func hsToken(edit func(jwt.MapClaims)) func(t *testing.T) string {
	return func(t *testing.T) string {
		c := hasuraClaims()
		if edit != nil {
			edit(c)
		}
		return sign(t, jwt.SigningMethodHS256, []byte(testHMAC), c, "")
	}
}

func nsEdit(f func(ns map[string]any)) func(jwt.MapClaims) {
	return func(c jwt.MapClaims) { f(c[DefaultClaimsNamespace].(map[string]any)) }
}

func badTokenCases(t *testing.T) []badCase {
	k := testKeys(t)
	rsPub := pemPublic(t, &k.rsa.PublicKey)
	rsSecret := secretJSON(t, map[string]any{"type": "RS256", "key": rsPub})
	audSecret := hsSecret(t, map[string]any{"audience": "coffer", "issuer": "https://id.example"})
	U := coffer.EUNAUTHORIZED
	return []badCase{
		{name: "alg none", token: func(t *testing.T) string {
			return sign(t, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, hasuraClaims(), "")
		}, code: U, msg: "not allowed"},
		{name: "alg none against RS256", secret: rsSecret, token: func(t *testing.T) string {
			return sign(t, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, hasuraClaims(), "")
		}, code: U},
		{name: "key confusion HS256 with RSA public PEM", secret: rsSecret, token: func(t *testing.T) string {
			return sign(t, jwt.SigningMethodHS256, []byte(rsPub), hasuraClaims(), "")
		}, code: U, msg: "not allowed"},
		{name: "other algorithm of the same family", secret: rsSecret, token: func(t *testing.T) string {
			return sign(t, jwt.SigningMethodRS512, k.rsa, hasuraClaims(), "")
		}, code: U, msg: "not allowed"},
		{name: "ES256 against RS256", secret: rsSecret, token: func(t *testing.T) string {
			return sign(t, jwt.SigningMethodES256, k.ec256, hasuraClaims(), "")
		}, code: U},
		{name: "unknown alg", token: func(t *testing.T) string {
			return rawToken(`{"alg":"XX999","typ":"JWT"}`, `{"exp":9999999999}`, "c2ln")
		}, code: U, msg: "not supported"},
		{name: "expired by 1 s", token: hsToken(func(c jwt.MapClaims) { c["exp"] = testNow.Unix() - 1 }), code: U, msg: "token is expired"},
		{name: "expires now", token: hsToken(func(c jwt.MapClaims) { c["exp"] = testNow.Unix() }), code: U, msg: "expired"},
		{name: "nbf in the future", token: hsToken(func(c jwt.MapClaims) { c["nbf"] = testNow.Unix() + 60 }), code: U, msg: "not valid yet"},
		{name: "iat in the future", token: hsToken(func(c jwt.MapClaims) { c["iat"] = testNow.Unix() + 60 }), code: U, msg: "before it was issued"},
		{name: "missing exp", token: hsToken(func(c jwt.MapClaims) { delete(c, "exp") }), code: U, msg: "missing exp claim"},
		{name: "exp not a number", token: hsToken(func(c jwt.MapClaims) { c["exp"] = "tomorrow" }), code: U},
		{name: "wrong aud", secret: audSecret, token: hsToken(func(c jwt.MapClaims) {
			c["aud"], c["iss"] = "other", "https://id.example"
		}), code: U, msg: "audience mismatch"},
		{name: "aud array without the right value", secret: audSecret, token: hsToken(func(c jwt.MapClaims) {
			c["aud"], c["iss"] = []string{"a", "b"}, "https://id.example"
		}), code: U, msg: "audience mismatch"},
		{name: "missing aud", secret: audSecret, token: hsToken(func(c jwt.MapClaims) { c["iss"] = "https://id.example" }), code: U, msg: "missing aud"},
		{name: "wrong iss", secret: audSecret, token: hsToken(func(c jwt.MapClaims) {
			c["aud"], c["iss"] = "coffer", "https://evil.example"
		}), code: U, msg: "issuer mismatch"},
		{name: "missing iss", secret: audSecret, token: hsToken(func(c jwt.MapClaims) { c["aud"] = "coffer" }), code: U, msg: "missing iss"},
		{name: "malformed base64", token: func(t *testing.T) string {
			p := strings.Split(hsToken(nil)(t), ".")
			return p[0] + ".*" + p[1][1:] + "." + p[2]
		}, code: U, msg: "malformed"},
		{name: "padded base64", token: func(t *testing.T) string {
			p := strings.Split(hsToken(nil)(t), ".")
			return p[0] + "." + p[1] + "==." + p[2]
		}, code: U},
		{name: "truncated token", token: func(t *testing.T) string { s := hsToken(nil)(t); return s[:len(s)-10] }, code: U},
		{name: "two segments", token: func(t *testing.T) string { s := hsToken(nil)(t); return s[:strings.LastIndex(s, ".")] }, code: U, msg: "malformed"},
		{name: "not a JWT", token: func(*testing.T) string { return "hello" }, code: U, msg: "malformed"},
		{name: "payload not JSON", token: func(*testing.T) string { return rawToken(`{"alg":"HS256"}`, `not json`, "c2ln") }, code: U},
		{name: "huge token", token: hsToken(func(c jwt.MapClaims) { c["pad"] = strings.Repeat("x", MaxTokenSize) }), code: U, msg: "too large"},
		{name: "wrong claims namespace", token: hsToken(func(c jwt.MapClaims) {
			c["https://example.com/claims"] = c[DefaultClaimsNamespace]
			delete(c, DefaultClaimsNamespace)
		}), code: U, msg: "namespace"},
		{name: "namespace not an object", token: hsToken(func(c jwt.MapClaims) { c[DefaultClaimsNamespace] = "x" }), code: U},
		{name: "role not in allowed roles", token: hsToken(nil), role: "admin", code: coffer.EFORBIDDEN, msg: `role "admin" is not allowed`},
		{name: "missing default role", token: hsToken(nsEdit(func(ns map[string]any) { delete(ns, "x-hasura-default-role") })), code: U, msg: "x-hasura-default-role"},
		{name: "default role not a string", token: hsToken(nsEdit(func(ns map[string]any) { ns["x-hasura-default-role"] = 1 })), code: U},
		{name: "default role not in allowed roles", token: hsToken(nsEdit(func(ns map[string]any) { ns["x-hasura-default-role"] = "admin" })), code: U, msg: "not in"},
		{name: "missing allowed roles", token: hsToken(nsEdit(func(ns map[string]any) { delete(ns, "x-hasura-allowed-roles") })), code: U},
		{name: "allowed roles not an array", token: hsToken(nsEdit(func(ns map[string]any) { ns["x-hasura-allowed-roles"] = "user" })), code: U},
		{name: "allowed roles not strings", token: hsToken(nsEdit(func(ns map[string]any) { ns["x-hasura-allowed-roles"] = []any{"user", 3} })), code: U},
		{name: "duplicate claim in two cases", token: hsToken(nsEdit(func(ns map[string]any) { ns["X-HASURA-USER-ID"] = "u2" })), code: U, msg: "twice"},
		{name: "wrong signature", token: func(t *testing.T) string {
			a, b := hsToken(nil)(t), hsToken(func(c jwt.MapClaims) { c["sub"] = "u2" })(t)
			return a[:strings.LastIndex(a, ".")] + b[strings.LastIndex(b, "."):]
		}, code: U, msg: "signature is invalid"},
		{name: "HS256 signed by a different secret", token: func(t *testing.T) string {
			return sign(t, jwt.SigningMethodHS256, []byte(testHMAC+"x"), hasuraClaims(), "")
		}, code: U, msg: "signature is invalid"},
		{name: "RS256 signed by a different key", secret: rsSecret, token: func(t *testing.T) string {
			return sign(t, jwt.SigningMethodRS256, k.rsa2, hasuraClaims(), "")
		}, code: U, msg: "signature is invalid"},
	}
}

// rawToken assembles a token from raw JSON header and payload.
func rawToken(header, payload, sig string) string {
	return b64(header) + "." + b64(payload) + "." + sig
}

func b64(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

func TestJWTBadTokens(t *testing.T) {
	for _, c := range badTokenCases(t) {
		t.Run(c.name, func(t *testing.T) {
			secret := c.secret
			if secret == "" {
				secret = hsSecret(t, nil)
			}
			a := newTestAuth(t, secret)
			p, err := a.Principal(request(c.token(t), c.role))
			if err == nil {
				t.Fatalf("token accepted: %+v", p)
			}
			if got := coffer.ErrorCode(err); got != c.code {
				t.Fatalf("code = %s (%v), want %s", got, err, c.code)
			}
			t.Logf("%s: %s", coffer.ErrorCode(err), coffer.ErrorMessage(err))
			if msg := coffer.ErrorMessage(err); !strings.Contains(msg, c.msg) {
				t.Errorf("message %q does not contain %q", msg, c.msg)
			}
		})
	}
}

func TestJWTSkew(t *testing.T) {
	expired := hsToken(func(c jwt.MapClaims) { c["exp"] = testNow.Unix() - 1 })(t)
	fresh := hsToken(func(c jwt.MapClaims) { c["exp"] = testNow.Unix() + 1 })(t)
	if _, err := newTestAuth(t, hsSecret(t, nil)).Principal(request(fresh, "")); err != nil {
		t.Errorf("token valid for 1 more second refused: %v", err)
	}
	lenient := newTestAuth(t, hsSecret(t, map[string]any{"allowed_skew": 5}))
	if _, err := lenient.Principal(request(expired, "")); err != nil {
		t.Errorf("allowed_skew 5: token expired by 1 s refused: %v", err)
	}
	noExp := hsToken(func(c jwt.MapClaims) { delete(c, "exp") })(t)
	if _, err := newTestAuth(t, hsSecret(t, map[string]any{"require_exp": false})).Principal(request(noExp, "")); err != nil {
		t.Errorf("require_exp false: token without exp refused: %v", err)
	}
}

func TestJWTAudienceList(t *testing.T) {
	a := newTestAuth(t, hsSecret(t, map[string]any{"audience": []string{"one", "coffer"}}))
	tok := hsToken(func(c jwt.MapClaims) { c["aud"] = []string{"x", "coffer"} })(t)
	if _, err := a.Principal(request(tok, "")); err != nil {
		t.Fatalf("token with a matching audience refused: %v", err)
	}
}

func TestAuthorizationForms(t *testing.T) {
	a := newTestAuth(t, hsSecret(t, nil))
	tok := hsToken(nil)(t)
	cases := []struct {
		header string
		code   string
		role   string
	}{
		{"", "", "public"},
		{"Bearer " + tok, "", "user"},
		{"bearer  " + tok + " ", "", "user"},
		{"Basic dXNlcjpwYXNz", coffer.EUNAUTHORIZED, ""},
		{"Bearer", coffer.EUNAUTHORIZED, ""},
		{"Bearer   ", coffer.EUNAUTHORIZED, ""},
		{tok, coffer.EUNAUTHORIZED, ""},
	}
	for _, c := range cases {
		r := request("", "")
		if c.header != "" {
			r.Header.Set("Authorization", c.header)
		}
		p, err := a.Principal(r)
		if coffer.ErrorCode(err) != c.code || (err == nil && p.Role != c.role) {
			t.Errorf("%.20q: principal %+v, err %v; want code %q role %q", c.header, p, err, c.code, c.role)
		}
	}
	r := request(tok, "")
	r.Header.Add("Authorization", "Bearer "+tok)
	if _, err := a.Principal(r); coffer.ErrorCode(err) != coffer.EUNAUTHORIZED {
		t.Errorf("two Authorization headers: %v", err)
	}
	r = request(tok, "user")
	r.Header.Add(HeaderRole, "editor")
	if _, err := a.Principal(r); coffer.ErrorCode(err) != coffer.EINVALID {
		t.Errorf("two role headers: %v", err)
	}
}

// TestJWTDisabledIgnoresBearer: without a JWT secret a token is ignored, so
// clients that always send one still make anonymous reads.
func TestJWTDisabledIgnoresBearer(t *testing.T) {
	a := newTestAuth(t, "")
	p, err := a.Principal(request("not.a.token", "user"))
	if err != nil || !p.Anonymous || p.Role != "public" {
		t.Fatalf("got %+v, %v; want anonymous", p, err)
	}
}

func TestAdminSecretWithRole(t *testing.T) {
	a := newTestAuth(t, hsSecret(t, nil))
	cases := []struct {
		role      string
		wantAdmin bool
		wantRole  string
	}{
		{"", true, "admin"},
		{"admin", true, "admin"},
		{"user", false, "user"},
		{"anything", false, "anything"},
	}
	for _, c := range cases {
		r := request("garbage-token-ignored", c.role)
		r.Header.Set(HeaderAdminSecret, "admin-secret")
		r.Header.Set("X-Hasura-User-Id", "u9")
		r.Header.Set("X-Hasura-Org-Id", "o1")
		p, err := a.Principal(r)
		if err != nil {
			t.Fatalf("role %q: %v", c.role, err)
		}
		if p.Admin != c.wantAdmin || p.Role != c.wantRole || p.UserID != "u9" || p.Anonymous {
			t.Errorf("role %q: principal %+v", c.role, p)
		}
		if p.Session["x-hasura-role"] != c.wantRole || p.Session["x-hasura-org-id"] != "o1" {
			t.Errorf("role %q: session %v", c.role, p.Session)
		}
		if _, leaked := p.Session["x-hasura-admin-secret"]; leaked {
			t.Errorf("role %q: the admin secret is a session variable", c.role)
		}
	}
	r := request("", "user")
	r.Header.Set(HeaderAdminSecret, "wrong")
	if _, err := a.Principal(r); coffer.ErrorCode(err) != coffer.EUNAUTHORIZED {
		t.Errorf("wrong admin secret with role: %v", err)
	}
}

func TestJWTClaimsMap(t *testing.T) {
	secret := hsSecret(t, map[string]any{"claims_map": map[string]any{
		"x-hasura-user-id":       "$.sub",
		"x-hasura-allowed-roles": map[string]any{"path": "$.roles"},
		"X-Hasura-Default-Role":  map[string]any{"path": "$.roles[0]"},
		"x-hasura-org-id":        map[string]any{"path": "$.org['id']", "default": "none"},
		"x-hasura-tenant":        "acme",
	}})
	a := newTestAuth(t, secret)
	claims := jwt.MapClaims{"sub": "u7", "roles": []string{"viewer", "user"}, "exp": testNow.Unix() + 60}
	p, err := a.Principal(request(sign(t, jwt.SigningMethodHS256, []byte(testHMAC), claims, ""), "user"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"x-hasura-role": "user", "x-hasura-user-id": "u7", "x-hasura-org-id": "none", "x-hasura-tenant": "acme"}
	if p.Role != "user" || p.UserID != "u7" || len(p.Session) != len(want) {
		t.Fatalf("principal %+v", p)
	}
	for k, v := range want {
		if p.Session[k] != v {
			t.Errorf("Session[%s] = %q, want %q", k, p.Session[k], v)
		}
	}
	delete(claims, "sub")
	_, err = a.Principal(request(sign(t, jwt.SigningMethodHS256, []byte(testHMAC), claims, ""), ""))
	if coffer.ErrorCode(err) != coffer.EUNAUTHORIZED || !strings.Contains(coffer.ErrorMessage(err), "x-hasura-user-id") {
		t.Errorf("mapped claim missing without default: %v", err)
	}
}

func TestJWTClaimsNamespacePath(t *testing.T) {
	ns := hasuraClaims()[DefaultClaimsNamespace]
	nsJSON, _ := json.Marshal(ns)
	cases := []struct {
		name   string
		extra  map[string]any
		claims jwt.MapClaims
	}{
		{"path", map[string]any{"claims_namespace_path": "$.hasura.claims"},
			jwt.MapClaims{"hasura": map[string]any{"claims": ns}}},
		{"root", map[string]any{"claims_namespace_path": "$"},
			jwt.MapClaims{"x-hasura-default-role": "user", "x-hasura-allowed-roles": []string{"user"}, "x-hasura-user-id": "u1"}},
		{"custom namespace", map[string]any{"claims_namespace": "https://coffer.dev/claims"},
			jwt.MapClaims{"https://coffer.dev/claims": ns}},
		{"stringified", map[string]any{"claims_format": "stringified_json"},
			jwt.MapClaims{DefaultClaimsNamespace: string(nsJSON)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := newTestAuth(t, hsSecret(t, c.extra))
			c.claims["exp"] = testNow.Unix() + 60
			p, err := a.Principal(request(sign(t, jwt.SigningMethodHS256, []byte(testHMAC), c.claims, ""), ""))
			if err != nil {
				t.Fatal(err)
			}
			if p.Role != "user" || p.UserID != "u1" {
				t.Errorf("principal %+v", p)
			}
		})
	}
	a := newTestAuth(t, hsSecret(t, map[string]any{"claims_namespace_path": "$.hasura.claims"}))
	_, err := a.Principal(request(hsToken(nil)(t), ""))
	if coffer.ErrorCode(err) != coffer.EUNAUTHORIZED {
		t.Errorf("claims under the default namespace with a namespace path: %v", err)
	}
}

func TestSessionValue(t *testing.T) {
	cases := []struct {
		in   string
		want string
	}{
		{`"x"`, "x"},
		{`12345678901234567890`, "12345678901234567890"},
		{`1.5`, "1.5"},
		{`false`, "false"},
		{`["a","b"]`, "{a,b}"},
		{`[]`, "{}"},
		{`["", "NULL", "a,b", "q\"x", "b\\s", null, [1,[2]]]`, `{"","NULL","a,b","q\"x","b\\s",NULL,{1,{2}}}`},
		{`{"k":1}`, `{"k":1}`},
	}
	for _, c := range cases {
		v, err := decodeJSONValue([]byte(c.in))
		if err != nil {
			t.Fatal(err)
		}
		if got := sessionValue(v); got != c.want {
			t.Errorf("sessionValue(%s) = %s, want %s", c.in, got, c.want)
		}
	}
}

// TestAdminSecretHashes: secrets given as digests (a tenant's) make a request admin,
// each of them, with or without a plain secret beside them; anything else is refused.
func TestAdminSecretHashes(t *testing.T) {
	for _, plain := range []string{"", "plain-secret"} {
		cfg := DefaultConfig()
		cfg.AdminSecret = plain
		cfg.AdminSecretHashes = [][32]byte{sha256.Sum256([]byte("tenant-one")), sha256.Sum256([]byte("tenant-two"))}
		a, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		try := func(secret string) bool {
			r := request("", "")
			r.Header.Set(HeaderAdminSecret, secret)
			p, err := a.Principal(r)
			return err == nil && p.Admin
		}
		if !try("tenant-one") || !try("tenant-two") || try("tenant-three") || try("") {
			t.Errorf("plain %q: hashed secrets not honoured exactly", plain)
		}
		if try("plain-secret") != (plain != "") {
			t.Errorf("plain %q: the plain secret's answer is wrong", plain)
		}
	}
}
