package tenant

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"

	"github.com/coffer/coffer"
)

// hashPrefix marks a stored admin secret: "sha256:" and the hex SHA-256 of the
// secret. Unsalted on purpose: a check hashes the presented secret once and
// compares it with every entry, and a salt would not protect a weak secret anyway
// (that takes a slow KDF, too slow per request): weak secrets are refused instead
// (at least 16 bytes on write).
const hashPrefix = "sha256:"

// isHash reports whether v is a stored admin secret: "sha256:" + 64 lower-case hex.
func isHash(v string) bool {
	if len(v) != len(hashPrefix)+2*sha256.Size || v[:len(hashPrefix)] != hashPrefix {
		return false
	}
	for i := len(hashPrefix); i < len(v); i++ {
		if c := v[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// HashAdminSecret returns the stored form of an admin secret.
func HashAdminSecret(plain string) string {
	sum := sha256.Sum256([]byte(plain))
	return hashPrefix + hex.EncodeToString(sum[:])
}

// Field names sealed values are bound to.
const (
	fieldPresignKey      = "presignKey"
	fieldSecretAccessKey = "storage.secretAccessKey"
)

// Prepare turns written settings into their stored form for tenantID: plaintext
// admin secrets become hashes, the presign key, the S3 secret key and the HMAC
// secret of the JWT document are sealed. Values
// already in stored form are kept (a sealed one must open with this key, tenant
// and field). Validates first; returns EINVALID.
func (s *Settings) Prepare(sealer *Sealer, tenantID string) error {
	if err := s.Validate(); err != nil {
		return err
	}
	for i, a := range s.AdminSecrets {
		if !isHash(a) {
			s.AdminSecrets[i] = HashAdminSecret(a)
		}
	}
	if err := sealField(sealer, &s.PresignKey, tenantID, fieldPresignKey); err != nil {
		return err
	}
	if err := s.sealJWTKey(sealer, tenantID); err != nil {
		return err
	}
	return sealField(sealer, &s.Storage.SecretAccessKey, tenantID, fieldSecretAccessKey)
}

// sealField seals *v in place unless it is empty or already sealed for this field.
func sealField(sealer *Sealer, v *string, tenantID, field string) error {
	switch {
	case *v == "":
		return nil
	case IsSealed(*v):
		if _, err := sealer.Open(*v, sealContext(tenantID, field)); err != nil {
			return invalid(field, "%s", coffer.ErrorMessage(err))
		}
		return nil
	}
	*v = sealer.Seal(*v, sealContext(tenantID, field))
	return nil
}

// OpenPresignKey returns the tenant's presign key in plaintext ("" if unset).
// Returns EINVALID if it does not open (another server key).
func (s *Settings) OpenPresignKey(sealer *Sealer, tenantID string) (string, error) {
	return openField(sealer, s.PresignKey, tenantID, fieldPresignKey)
}

// OpenSecretAccessKey returns the tenant's S3 secret key in plaintext ("" if unset).
func (s *Settings) OpenSecretAccessKey(sealer *Sealer, tenantID string) (string, error) {
	return openField(sealer, s.Storage.SecretAccessKey, tenantID, fieldSecretAccessKey)
}

// openField opens a sealed field; a plaintext one (not prepared) is refused.
func openField(sealer *Sealer, v, tenantID, field string) (string, error) {
	if v == "" {
		return "", nil
	}
	return sealer.Open(v, sealContext(tenantID, field))
}

// CheckAdminSecret reports whether got is one of the admin secrets. It hashes got
// once and compares the hash with every stored entry in constant time, never
// stopping at a match. Entries not in stored form (not prepared) never match, nor
// does an empty got.
func (s *Settings) CheckAdminSecret(got string) bool {
	sum := sha256.Sum256([]byte(got))
	match := 0
	for _, a := range s.AdminSecrets {
		var want [sha256.Size]byte
		if !isHash(a) {
			continue
		}
		hex.Decode(want[:], []byte(a[len(hashPrefix):]))
		match |= subtle.ConstantTimeCompare(sum[:], want[:])
	}
	return match == 1 && got != ""
}

// SecretState says whether a secret is set, never what it is.
type SecretState struct {
	Set   bool `json:"set"`
	Count int  `json:"count,omitempty"` // for lists
}

// Redacted is the form of Settings any answer shows: no secret, hash or sealed
// value, only whether each is set.
type Redacted struct {
	AdminSecrets     SecretState     `json:"adminSecrets"`
	JWT              json.RawMessage `json:"jwt,omitempty"` // without its "key"
	PresignKey       SecretState     `json:"presignKey"`
	UnauthorizedRole string          `json:"unauthorizedRole,omitempty"`
	Storage          RedactedStorage `json:"storage"`
	Limits           Limits          `json:"limits"`
}

// RedactedStorage is Storage without its secret key.
type RedactedStorage struct {
	Kind            string      `json:"kind"`
	Endpoint        string      `json:"endpoint,omitempty"`
	Region          string      `json:"region,omitempty"`
	Bucket          string      `json:"bucket,omitempty"`
	Prefix          string      `json:"prefix,omitempty"`
	AccessKeyID     string      `json:"accessKeyId,omitempty"`
	SecretAccessKey SecretState `json:"secretAccessKey"`
	PathStyle       bool        `json:"pathStyle,omitempty"`
}

// Redacted returns the settings as answers may show them.
func (s *Settings) Redacted() Redacted {
	st := s.Storage
	kind := st.Kind
	if kind == "" {
		kind = StorageShared
	}
	return Redacted{
		AdminSecrets:     SecretState{Set: len(s.AdminSecrets) > 0, Count: len(s.AdminSecrets)},
		JWT:              redactJWT(s.JWT),
		PresignKey:       SecretState{Set: s.PresignKey != ""},
		UnauthorizedRole: s.UnauthorizedRole,
		Storage: RedactedStorage{
			Kind: kind, Endpoint: st.Endpoint, Region: st.Region, Bucket: st.Bucket, Prefix: st.Prefix,
			AccessKeyID: st.AccessKeyID, SecretAccessKey: SecretState{Set: st.SecretAccessKey != ""}, PathStyle: st.PathStyle,
		},
		Limits: s.Limits,
	}
}

// redactJWT returns the JWT document with its "key" (an HMAC secret, or a public
// key: both replaced) as {"set": true}; a document that does not decode as an
// object is shown only as set.
func redactJWT(doc json.RawMessage) json.RawMessage {
	if len(doc) == 0 || string(doc) == "null" {
		return nil
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(doc, &m) != nil {
		return json.RawMessage(`{"set":true}`)
	}
	if _, ok := m["key"]; ok {
		m["key"] = json.RawMessage(`{"set":true}`)
	}
	out, err := json.Marshal(m)
	if err != nil {
		return json.RawMessage(`{"set":true}`)
	}
	return out
}
