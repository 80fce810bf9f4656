package auth

import (
	"bytes"
	"net/url"
	"testing"
	"time"

	"github.com/coffer/coffer"
)

func testSigner(t *testing.T, now time.Time) *Signer {
	t.Helper()
	s, err := NewSigner("k2", map[string][]byte{"k1": bytes.Repeat([]byte{1}, 32), "k2": bytes.Repeat([]byte{2}, 32)})
	if err != nil {
		t.Fatal(err)
	}
	s.now = func() time.Time { return now }
	return s
}

func TestPresign(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	s := testSigner(t, now)
	id := "6f1e7a3c-8a4b-4c2d-9e1f-0a1b2c3d4e5f"
	raw := s.Sign("GET", id, time.Minute, nil)
	q, _ := url.ParseQuery(raw)
	if err := s.Verify("GET", id, q); err != nil {
		t.Fatalf("fresh URL refused: %v", err)
	}
	tamper := map[string]func(url.Values){
		"expiry":    func(v url.Values) { v.Set(ParamExpires, "9999999999") },
		"key":       func(v url.Values) { v.Set(ParamKeyID, "k1") },
		"unknown":   func(v url.Values) { v.Set(ParamKeyID, "nope") },
		"signature": func(v url.Values) { v.Set(ParamSignature, "AAAA") },
		"extra":     func(v url.Values) { v.Set("w", "100") },
		"missing":   func(v url.Values) { v.Del(ParamSignature) },
	}
	for name, f := range tamper {
		v, _ := url.ParseQuery(raw)
		f(v)
		if err := s.Verify("GET", id, v); coffer.ErrorCode(err) != coffer.EFORBIDDEN {
			t.Errorf("%s: got %v, want EFORBIDDEN", name, err)
		}
	}
	if err := s.Verify("GET", "00000000-0000-0000-0000-000000000000", q); err == nil {
		t.Error("other file id accepted")
	}
	if err := s.Verify("PUT", id, q); err == nil {
		t.Error("other method accepted")
	}
	s.now = func() time.Time { return now.Add(61 * time.Second) }
	if err := s.Verify("GET", id, q); coffer.ErrorCode(err) != coffer.EFORBIDDEN {
		t.Errorf("expired URL: %v", err)
	}
}

func TestPresignRotation(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	old := testSigner(t, now)
	old.current = "k1"
	raw := old.Sign("GET", "x", time.Hour, nil)
	q, _ := url.ParseQuery(raw)
	if err := testSigner(t, now).Verify("GET", "x", q); err != nil {
		t.Fatalf("URL signed with the previous key refused after rotation: %v", err)
	}
}

func FuzzPresignVerify(f *testing.F) {
	f.Add("X-Coffer-Expires=1&X-Coffer-Key-Id=k1&X-Coffer-Signature=abc")
	f.Add("%zz&&==")
	s, _ := NewSigner("k1", map[string][]byte{"k1": bytes.Repeat([]byte{1}, 32)})
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		if err := s.Verify("GET", "x", q); err == nil {
			t.Fatalf("forged query accepted: %q", raw)
		}
	})
}
