package tenant

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"strings"

	"github.com/coffer/coffer"
)

// sealPrefix marks a sealed value and its format: AES-256-GCM, a random 96-bit
// nonce, then the ciphertext and tag, in unpadded base64url. A later format gets
// a new prefix, so old values stay readable.
const sealPrefix = "v1:"

// SealKeySize is the size of a server key.
const SealKeySize = 32

// Sealer encrypts the secrets a settings document keeps (a tenant's presign key,
// its S3 secret key) with a server key, so the metadata store and its backups
// never hold them in the clear. Safe for concurrent use.
type Sealer struct {
	aead cipher.AEAD
}

// NewSealer returns a sealer over a 32-byte server key. Returns EINVALID for
// another size.
func NewSealer(key []byte) (*Sealer, error) {
	if len(key) != SealKeySize {
		return nil, coffer.Errorf(coffer.EINVALID, "seal key: want %d bytes, got %d", SealKeySize, len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, coffer.Internal(err, "seal key")
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, coffer.Internal(err, "seal key")
	}
	return &Sealer{aead: aead}, nil
}

// Seal encrypts plain, bound to context (the tenant and field it belongs to, so a
// sealed value copied to another tenant or field does not open there).
func (s *Sealer) Seal(plain, context string) string {
	nonce := make([]byte, s.aead.NonceSize(), s.aead.NonceSize()+len(plain)+s.aead.Overhead())
	rand.Read(nonce) // never fails (it crashes the program instead, since Go 1.24)
	out := s.aead.Seal(nonce, nonce, []byte(plain), []byte(context))
	return sealPrefix + base64.RawURLEncoding.EncodeToString(out)
}

// Open decrypts what Seal returned for the same context. Returns EINVALID if
// sealed is malformed, or was sealed with another key or for another context.
func (s *Sealer) Open(sealed, context string) (string, error) {
	b64, ok := strings.CutPrefix(sealed, sealPrefix)
	if !ok {
		return "", coffer.Errorf(coffer.EINVALID, "not a sealed value")
	}
	raw, err := base64.RawURLEncoding.Strict().DecodeString(b64)
	n := s.aead.NonceSize()
	if err != nil || len(raw) < n+s.aead.Overhead() {
		return "", coffer.Errorf(coffer.EINVALID, "sealed value is malformed")
	}
	plain, err := s.aead.Open(nil, raw[:n], raw[n:], []byte(context))
	if err != nil {
		return "", coffer.Errorf(coffer.EINVALID, "sealed value does not open with this server key (another key, tenant or field)")
	}
	return string(plain), nil
}

// IsSealed reports whether v has the form of a sealed value.
func IsSealed(v string) bool { return strings.HasPrefix(v, sealPrefix) }

// sealContext binds a sealed value to its tenant and field.
func sealContext(tenantID, field string) string {
	return "coffer tenant settings\x00" + tenantID + "\x00" + field
}
