package tenant

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/coffer/coffer"
)

const (
	adminA   = "first-admin-secret-0123"
	adminB   = "second-admin-secret-456"
	presign  = "presign-key-presign-key-presign-key!"
	hmacKey  = "jwt-hmac-secret-jwt-hmac-secret-jwt-hmac"
	s3Secret = "s3-secret-access-key-value"
)

// writtenDoc is a settings document as a client writes it: secrets in plaintext.
var writtenDoc = `{
  "adminSecrets": ["` + adminA + `", "` + adminB + `"],
  "jwt": {"type": "HS256", "key": "` + hmacKey + `", "issuer": "https://auth.acme.test"},
  "presignKey": "` + presign + `",
  "unauthorizedRole": "anonymous",
  "storage": {"kind": "s3", "endpoint": "http://127.0.0.1:9000", "region": "eu-west-1",
    "bucket": "acme-files", "prefix": "coffer/", "accessKeyId": "AKIAEXAMPLE",
    "secretAccessKey": "` + s3Secret + `", "pathStyle": true},
  "limits": {"requestsPerSecond": 100, "burst": 200, "userRequestsPerSecond": 5,
    "bytesPerSecond": 10485760, "imageConcurrency": 2}
}`

func testSealer(t testing.TB, fill byte) *Sealer {
	s, err := NewSealer(bytes.Repeat([]byte{fill}, SealKeySize))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// prepared parses writtenDoc, prepares it for tenant "acme" and returns the stored
// document.
func prepared(t *testing.T, sealer *Sealer) []byte {
	s, err := Parse([]byte(writtenDoc))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Prepare(sealer, "acme"); err != nil {
		t.Fatal(err)
	}
	stored, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return stored
}

func TestSettingsStoredForm(t *testing.T) {
	sealer := testSealer(t, 1)
	stored := prepared(t, sealer)
	for _, secret := range []string{adminA, adminB, presign, hmacKey, s3Secret} {
		if bytes.Contains(stored, []byte(secret)) {
			t.Errorf("the stored document holds a secret in the clear: %s", stored)
		}
	}
	s, err := Parse(stored)
	if err != nil {
		t.Fatalf("the stored form does not parse: %v\n%s", err, stored)
	}
	if err := s.Prepare(sealer, "acme"); err != nil {
		t.Fatalf("Prepare is not idempotent: %v", err)
	}
	if again, _ := json.Marshal(s); !bytes.Equal(again, stored) {
		t.Errorf("preparing the stored form changed it:\n%s\n%s", stored, again)
	}
	checkOpens(t, s, sealer)
}

// checkOpens checks every sealed field opens to what was written, and only for
// its own tenant and key.
func checkOpens(t *testing.T, s *Settings, sealer *Sealer) {
	if k, err := s.OpenPresignKey(sealer, "acme"); err != nil || k != presign {
		t.Errorf("OpenPresignKey = %q, %v", k, err)
	}
	if k, err := s.OpenSecretAccessKey(sealer, "acme"); err != nil || k != s3Secret {
		t.Errorf("OpenSecretAccessKey = %q, %v", k, err)
	}
	if c, err := s.JWTConfig(sealer, "acme"); err != nil || c.Key != hmacKey || c.Issuer != "https://auth.acme.test" {
		t.Errorf("JWTConfig = %v, %v", c, err)
	}
	if _, err := s.OpenPresignKey(sealer, "bob"); coffer.ErrorCode(err) != coffer.EINVALID {
		t.Errorf("a presign key opened for another tenant: %v", err)
	}
	if _, err := s.JWTConfig(testSealer(t, 2), "acme"); coffer.ErrorCode(err) != coffer.EINVALID {
		t.Errorf("a JWT key opened with another server key: %v", err)
	}
	if err := s.Prepare(sealer, "bob"); coffer.ErrorCode(err) != coffer.EINVALID {
		t.Errorf("another tenant's sealed values were accepted: %v", err)
	}
	swapped := *s
	swapped.Storage.SecretAccessKey = s.PresignKey
	if err := swapped.Prepare(sealer, "acme"); coffer.ErrorField(err) != fieldSecretAccessKey {
		t.Errorf("a sealed presign key was accepted as the S3 secret key: %v", err)
	}
}

func TestCheckAdminSecret(t *testing.T) {
	s, err := Parse(prepared(t, testSealer(t, 1)))
	if err != nil {
		t.Fatal(err)
	}
	for got, want := range map[string]bool{
		adminA: true, adminB: true, "": false, adminA + " ": false, strings.ToUpper(adminA): false,
		s.AdminSecrets[0]: false, // the hash itself is not the secret
	} {
		if s.CheckAdminSecret(got) != want {
			t.Errorf("CheckAdminSecret(%q) = %v, want %v", got, !want, want)
		}
	}
	unprepared, _ := Parse([]byte(`{"adminSecrets": ["` + adminA + `"]}`))
	if unprepared.CheckAdminSecret(adminA) {
		t.Error("a plaintext (unprepared) entry matched")
	}
}

func TestRedacted(t *testing.T) {
	sealer := testSealer(t, 1)
	for _, doc := range [][]byte{[]byte(writtenDoc), prepared(t, sealer)} {
		s, err := Parse(doc)
		if err != nil {
			t.Fatal(err)
		}
		out, _ := json.Marshal(s.Redacted())
		for _, leak := range []string{adminA, adminB, presign, hmacKey, s3Secret, hashPrefix, sealPrefix} {
			if bytes.Contains(out, []byte(leak)) {
				t.Errorf("Redacted shows %q: %s", leak, out)
			}
		}
		for _, want := range []string{`"adminSecrets":{"set":true,"count":2}`, `"key":{"set":true}`, `"secretAccessKey":{"set":true}`, `"bucket":"acme-files"`} {
			if !bytes.Contains(out, []byte(want)) {
				t.Errorf("Redacted lacks %s: %s", want, out)
			}
		}
	}
}

func TestParseRefuses(t *testing.T) {
	cases := map[string]string{
		`[]`:                                          "",
		`{"adminSecrets": ["x"]} {}`:                  "",
		`{"adminSecret": []}`:                         "adminSecret",
		`{"limits": {"burst": "10"}}`:                 "limits.burst",
		`{"adminSecrets": ["short"]}`:                 "adminSecrets[0]",
		`{"adminSecrets": ["sha256:abc"]}`:            "adminSecrets[0]",
		`{"jwt": {"type": "HS256"}}`:                  "jwt",
		`{"jwt": {"type": "HS256", "key": "k"}}`:      "jwt",
		`{"jwt": 5}`:                                  "jwt",
		`{"presignKey": "too short"}`:                 "presignKey",
		`{"unauthorizedRole": "a b"}`:                 "unauthorizedRole",
		`{"storage": {"kind": "gcs"}}`:                "storage.kind",
		`{"storage": {"bucket": "b"}}`:                "storage",
		`{"storage": {"kind": "s3", "bucket": "No"}}`: "storage.bucket",
		`{"storage": {"kind": "s3", "bucket": "ok-b", "endpoint": "ftp://x"}}`:      "storage.endpoint",
		`{"storage": {"kind": "s3", "bucket": "ok-b", "endpoint": "http://u:p@x"}}`: "storage.endpoint",
		`{"storage": {"kind": "s3", "bucket": "ok-b", "prefix": "a/../b"}}`:         "storage.prefix",
		`{"storage": {"kind": "s3", "bucket": "ok-b", "region": "EU"}}`:             "storage.region",
		`{"storage": {"kind": "s3", "bucket": "ok-b"}}`:                             "storage.accessKeyId",
		`{"storage": {"kind": "s3", "bucket": "ok-b", "accessKeyId": "a"}}`:         "storage.secretAccessKey",
		`{"limits": {"requestsPerSecond": -1}}`:                                     "limits.requestsPerSecond",
		`{"limits": {"burst": 5}}`:                                                  "limits.burst",
		`{"limits": {"userBurst": 5}}`:                                              "limits.userBurst",
		`{"limits": {"bytesPerSecond": 10}}`:                                        "limits.bytesPerSecond",
		`{"limits": {"imageConcurrency": 1000}}`:                                    "limits.imageConcurrency",
	}
	for doc, field := range cases {
		_, err := Parse([]byte(doc))
		if coffer.ErrorCode(err) != coffer.EINVALID || coffer.ErrorField(err) != field {
			t.Errorf("Parse(%s) = %v (field %q), want EINVALID on %q", doc, err, coffer.ErrorField(err), field)
		}
	}
	if s, err := Parse([]byte(" \n")); err != nil || s.Validate() != nil || len(s.AdminSecrets) != 0 {
		t.Errorf("blank document: %+v, %v; want empty settings", s, err)
	}
	big := `{"unauthorizedRole": "` + strings.Repeat("a", MaxSettingsSize) + `"}`
	if _, err := Parse([]byte(big)); coffer.ErrorCode(err) != coffer.ETOOLARGE {
		t.Errorf("oversized document: %v", err)
	}
}

func TestSealer(t *testing.T) {
	if _, err := NewSealer(make([]byte, 16)); coffer.ErrorCode(err) != coffer.EINVALID {
		t.Errorf("16-byte key: %v", err)
	}
	s := testSealer(t, 7)
	a, b := s.Seal("secret", "ctx"), s.Seal("secret", "ctx")
	if a == b || !IsSealed(a) || strings.Contains(a, "secret") {
		t.Errorf("Seal: %q, %q (nonces must differ; no plaintext)", a, b)
	}
	if got, err := s.Open(a, "ctx"); err != nil || got != "secret" {
		t.Errorf("Open = %q, %v", got, err)
	}
	tampered := []byte(a)
	tampered[10] = map[bool]byte{true: 'B', false: 'A'}[tampered[10] == 'A'] // inside the nonce
	for _, bad := range []string{string(tampered), "v1:", "v1:!!", "secret", a[:20]} {
		if _, err := s.Open(bad, "ctx"); coffer.ErrorCode(err) != coffer.EINVALID {
			t.Errorf("Open(%q) = %v, want EINVALID", bad, err)
		}
	}
	if _, err := s.Open(a, "other"); coffer.ErrorCode(err) != coffer.EINVALID {
		t.Errorf("opened under another context: %v", err)
	}
}
