package auth

import (
	"context"
	"strings"
	"testing"

	"github.com/coffer/coffer"
	"github.com/golang-jwt/jwt/v5"
)

// FuzzParseToken feeds arbitrary tokens and role headers to HS256, RS256 and
// claims_map verifiers: no panic, and every error is EUNAUTHORIZED or EFORBIDDEN.
func FuzzParseToken(f *testing.F) {
	k := testKeys(f)
	claims := hasuraClaims()
	seeds := []string{
		sign(f, jwt.SigningMethodHS256, []byte(testHMAC), claims, ""),
		sign(f, jwt.SigningMethodRS256, k.rsa, claims, "kid"),
		sign(f, jwt.SigningMethodHS256, []byte(pemPublic(f, &k.rsa.PublicKey)), claims, ""),
		sign(f, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, claims, ""),
		sign(f, jwt.SigningMethodHS256, []byte(testHMAC), jwt.MapClaims{"exp": 1}, ""),
		sign(f, jwt.SigningMethodHS256, []byte(testHMAC), jwt.MapClaims{"sub": []any{1, []any{nil}}, "roles": "x"}, ""),
		rawToken(`{"alg":"HS256"}`, `{"exp":1e400}`, "x"),
		rawToken(`{"alg":"HS256","kid":{}}`, `[]`, ""),
		"", ".", "..", "a.b.c", "eyJ.eyJ.", strings.Repeat("A", MaxTokenSize+1),
	}
	for _, s := range seeds {
		f.Add(s, "")
		f.Add(s, "editor")
	}
	verifiers := fuzzVerifiers(f)
	f.Fuzz(func(t *testing.T, token, role string) {
		for _, v := range verifiers {
			p, err := v.principal(context.Background(), token, role)
			checkFuzzResult(t, p, err)
		}
	})
}

func fuzzVerifiers(f *testing.F) []*jwtVerifier {
	k := testKeys(f)
	secrets := []string{
		hsSecret(f, nil),
		secretJSON(f, map[string]any{"type": "RS256", "key": pemPublic(f, &k.rsa.PublicKey), "audience": "a"}),
		hsSecret(f, map[string]any{"require_exp": false, "claims_map": map[string]any{
			"x-hasura-user-id":       "$.sub",
			"x-hasura-allowed-roles": map[string]any{"path": "$.roles", "default": []string{"user"}},
			"x-hasura-default-role":  map[string]any{"path": "$.roles[0]", "default": "user"},
		}}),
		hsSecret(f, map[string]any{"claims_format": "stringified_json", "require_exp": false}),
	}
	var vs []*jwtVerifier
	for _, s := range secrets {
		vs = append(vs, newTestAuth(f, s).jwt)
	}
	return vs
}

func checkFuzzResult(t *testing.T, p *coffer.Principal, err error) {
	t.Helper()
	switch code := coffer.ErrorCode(err); {
	case err == nil && (p == nil || p.Role == "" || p.Admin || p.Session["x-hasura-role"] != p.Role):
		t.Fatalf("accepted with a bad principal: %+v", p)
	case err != nil && code != coffer.EUNAUTHORIZED && code != coffer.EFORBIDDEN:
		t.Fatalf("error code %s: %v", code, err)
	}
}

// FuzzClaims signs arbitrary payloads with the right key, so that the claims
// mapping (namespaces, claims_map, session values, roles) sees every shape of
// JSON: no panic, and every error is EUNAUTHORIZED or EFORBIDDEN.
func FuzzClaims(f *testing.F) {
	seeds := []string{
		`{"exp":1800000000,"https://hasura.io/jwt/claims":{"x-hasura-default-role":"user","x-hasura-allowed-roles":["user"]}}`,
		`{"https://hasura.io/jwt/claims":{"x-hasura-default-role":"user","x-hasura-allowed-roles":["user"],"x-hasura-a":[[1,[null,"x y"]],{"k":1}],"X-HASURA-A":1}}`,
		`{"https://hasura.io/jwt/claims":"{\"x-hasura-default-role\":\"user\",\"x-hasura-allowed-roles\":[\"user\"]}"}`,
		`{"sub":5,"roles":["a","b"]}`,
		`{"roles":[]}`,
		`{"exp":"x","nbf":[],"iat":{}}`,
		`{"aud":["a",1]}`,
		`[]`, `null`, `1`,
	}
	for _, s := range seeds {
		f.Add(s, "")
		f.Add(s, "b")
	}
	verifiers := fuzzVerifiers(f)
	header := b64(`{"alg":"HS256","typ":"JWT"}`)
	f.Fuzz(func(t *testing.T, payload, role string) {
		unsigned := header + "." + b64(payload)
		sig, err := jwt.SigningMethodHS256.Sign(unsigned, []byte(testHMAC))
		if err != nil {
			t.Fatal(err)
		}
		token := unsigned + "." + b64(string(sig))
		for _, v := range verifiers {
			p, err := v.principal(context.Background(), token, role)
			checkFuzzResult(t, p, err)
		}
	})
}
