package app

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/coffer/coffer/auth"
)

// presignSigner builds the presigned-URL signer: an explicit secret, else one derived
// from the admin secret (shared by every node that shares the admin secret), else a
// random key kept in the data dir.
func presignSigner(c *Config) (*auth.Signer, error) {
	cur, err := presignKey(c)
	if err != nil {
		return nil, err
	}
	keys := map[string][]byte{keyID(cur): cur}
	for _, p := range c.PresignPrevious {
		if len(p) < 32 {
			return nil, fmt.Errorf("--presign-previous-secrets: every key must be at least 32 bytes")
		}
		keys[keyID([]byte(p))] = []byte(p)
	}
	return auth.NewSigner(keyID(cur), keys)
}

// presignKey returns the current signing key: the explicit secret, else one derived
// from the admin secret, else the data dir's random key (created on first use).
func presignKey(c *Config) ([]byte, error) {
	if c.PresignSecret != "" {
		return []byte(c.PresignSecret), nil
	}
	if c.AdminSecret != "" {
		m := hmac.New(sha256.New, []byte(c.AdminSecret))
		m.Write([]byte("coffer presign key v1"))
		return m.Sum(nil), nil
	}
	path := filepath.Join(c.DataDir, "presign.key")
	if b, err := os.ReadFile(path); err == nil && len(b) >= 64 {
		return []byte(strings.TrimSpace(string(b))), nil
	}
	var k [32]byte
	_, _ = rand.Read(k[:])
	key := hex.EncodeToString(k[:])
	if err := os.MkdirAll(c.DataDir, 0o750); err != nil {
		return nil, err
	}
	if err := os.WriteFile(path, []byte(key+"\n"), 0o600); err != nil {
		return nil, fmt.Errorf("presign key: %w", err)
	}
	return []byte(key), nil
}

// keyID names a key by the first 4 bytes of its SHA-256, in hex.
func keyID(k []byte) string {
	s := sha256.Sum256(k)
	return hex.EncodeToString(s[:4])
}
