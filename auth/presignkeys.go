package auth

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// PresignKeys says where the server's presign keys come from (the flags of coffer
// serve, named in the errors).
type PresignKeys struct {
	Secret      string   // --presign-secret: the current key, if set
	AdminSecret string   // --admin-secret: else the current key is derived from it
	DataDir     string   // --data-dir: else a random key kept in DataDir/presign.key
	Previous    []string // --presign-previous-secrets: rotated-out keys still verified
}

// PresignSigner builds the presigned-URL signer: an explicit secret, else one derived
// from the admin secret (shared by every node that shares the admin secret), else a
// random key kept in the data dir; each key named by its KeyID.
func PresignSigner(k PresignKeys) (*Signer, error) {
	cur, err := k.current()
	if err != nil {
		return nil, err
	}
	keys := map[string][]byte{KeyID(cur): cur}
	for _, p := range k.Previous {
		if len(p) < 32 {
			return nil, fmt.Errorf("--presign-previous-secrets: every key must be at least 32 bytes")
		}
		keys[KeyID([]byte(p))] = []byte(p)
	}
	return NewSigner(KeyID(cur), keys)
}

// current returns the current signing key: the explicit secret, else one derived
// from the admin secret, else the data dir's random key (created on first use).
func (k PresignKeys) current() ([]byte, error) {
	if k.Secret != "" {
		return []byte(k.Secret), nil
	}
	if k.AdminSecret != "" {
		m := hmac.New(sha256.New, []byte(k.AdminSecret))
		m.Write([]byte("coffer presign key v1"))
		return m.Sum(nil), nil
	}
	path := filepath.Join(k.DataDir, "presign.key")
	if b, err := os.ReadFile(path); err == nil && len(b) >= 64 {
		return []byte(strings.TrimSpace(string(b))), nil
	}
	var r [32]byte
	_, _ = rand.Read(r[:])
	key := hex.EncodeToString(r[:])
	if err := os.MkdirAll(k.DataDir, 0o750); err != nil {
		return nil, err
	}
	if err := os.WriteFile(path, []byte(key+"\n"), 0o600); err != nil {
		return nil, fmt.Errorf("presign key: %w", err)
	}
	return []byte(key), nil
}

// KeyID names a key by the first 4 bytes of its SHA-256, in hex.
func KeyID(k []byte) string {
	s := sha256.Sum256(k)
	return hex.EncodeToString(s[:4])
}
