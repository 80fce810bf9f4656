package webhook

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestSignVerify(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	body := []byte(`{"id":"e1","type":"file.created"}`)
	h := Sign("s3cret-s3cret-s3cret", now, body)
	if !strings.HasPrefix(h, "t=1800000000,v1=") || len(h) != len("t=1800000000,v1=")+64 {
		t.Fatalf("header %q", h)
	}
	if err := Verify("s3cret-s3cret-s3cret", h, body, now.Add(time.Minute), 5*time.Minute); err != nil {
		t.Fatalf("valid signature refused: %v", err)
	}
	rotated := "t=1800000000,v1=" + strings.Repeat("0", 64) + "," + strings.TrimPrefix(h, "t=1800000000,")
	if err := Verify("s3cret-s3cret-s3cret", rotated, body, now, time.Minute); err != nil {
		t.Fatalf("one matching v1 of two refused: %v", err)
	}
	bad := map[string]struct {
		secret, header string
		body           []byte
		at             time.Time
	}{
		"other secret":    {"other-secret-other", h, body, now},
		"body changed":    {"s3cret-s3cret-s3cret", h, append([]byte(nil), append(body[:len(body)-1], ' ', '}')...), now},
		"too old":         {"s3cret-s3cret-s3cret", h, body, now.Add(6 * time.Minute)},
		"from the future": {"s3cret-s3cret-s3cret", h, body, now.Add(-6 * time.Minute)},
		"timestamp moved": {"s3cret-s3cret-s3cret", strings.Replace(h, "t=1800000000", "t=1800000001", 1), body, now},
		"no v1":           {"s3cret-s3cret-s3cret", "t=1800000000", body, now},
		"empty":           {"s3cret-s3cret-s3cret", "", body, now},
		"garbage":         {"s3cret-s3cret-s3cret", "v1=,t=x,,==", body, now},
	}
	for name, c := range bad {
		if err := Verify(c.secret, c.header, c.body, c.at, 5*time.Minute); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func FuzzVerify(f *testing.F) {
	f.Add("t=1800000000,v1=abc", []byte("{}"))
	f.Add(Sign("k", time.Unix(1_800_000_000, 0), []byte("{}")), []byte("{}"))
	f.Fuzz(func(t *testing.T, header string, body []byte) {
		// Only a header made with the secret may pass.
		if Verify("fuzz-secret", header, body, time.Unix(1_800_000_000, 0), time.Hour) == nil &&
			!strings.Contains(header, mac("fuzz-secret", strings.TrimPrefix(strings.Split(header, ",")[0], "t="), body)) {
			t.Fatalf("accepted %q", header)
		}
	})
}

// A receiver checks each delivery like this before trusting its body.
func ExampleVerify() {
	body := []byte(`{"id":"2f1c...","type":"file.created"}`)
	header := Sign("whsec_example-secret", time.Now(), body) // what coffer sends in Coffer-Signature
	err := Verify("whsec_example-secret", header, body, time.Now(), 5*time.Minute)
	fmt.Println(err == nil)
	// Output: true
}
