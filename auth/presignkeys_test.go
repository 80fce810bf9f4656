package auth

import (
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// signedBy signs with a and reports whether b accepts the URL.
func signedBy(t *testing.T, a, b *Signer) bool {
	t.Helper()
	q, err := url.ParseQuery(a.Sign("GET", "f", time.Minute, nil))
	if err != nil {
		t.Fatal(err)
	}
	return b.Verify("GET", "f", q) == nil
}

// TestPresignSigner: the explicit secret wins, else the admin secret's derived key
// (the same on every node), else the data dir's key, kept across restarts; previous
// keys still verify and must be long enough.
func TestPresignSigner(t *testing.T) {
	open := func(k PresignKeys) *Signer {
		t.Helper()
		s, err := PresignSigner(k)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	secret, admin := strings.Repeat("s", 32), "admin"
	dir := t.TempDir()
	explicit := open(PresignKeys{Secret: secret, AdminSecret: admin, DataDir: dir})
	if explicit.current != KeyID([]byte(secret)) {
		t.Errorf("explicit secret: current key %q", explicit.current)
	}
	derived := open(PresignKeys{AdminSecret: admin, DataDir: dir})
	if !signedBy(t, derived, open(PresignKeys{AdminSecret: admin})) || signedBy(t, derived, explicit) {
		t.Error("the admin secret's key is not the same on every node, or is the explicit secret")
	}
	if _, err := os.Stat(filepath.Join(dir, "presign.key")); err == nil {
		t.Error("a data dir key written while a secret was set")
	}
	kept := open(PresignKeys{DataDir: dir})
	if _, err := os.Stat(filepath.Join(dir, "presign.key")); err != nil || !signedBy(t, kept, open(PresignKeys{DataDir: dir})) {
		t.Errorf("the data dir key is not kept across restarts: %v", err)
	}
	rotated := open(PresignKeys{Secret: strings.Repeat("n", 32), Previous: []string{secret}})
	if !signedBy(t, explicit, rotated) || signedBy(t, rotated, explicit) {
		t.Error("a previous key does not verify, or the new key verifies on the old signer")
	}
	if _, err := PresignSigner(PresignKeys{Secret: secret, Previous: []string{"short"}}); err == nil ||
		!strings.Contains(err.Error(), "--presign-previous-secrets") {
		t.Errorf("a short previous key: %v", err)
	}
}
