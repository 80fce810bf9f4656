package auth

import (
	"math/rand"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestPresignMutations changes one field of valid presigned URLs by one character,
// 10,000 times: no mutant may be accepted.
func TestPresignMutations(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	s := testSigner(t, now)
	r := rand.New(rand.NewSource(3))
	const alphabet = "0123456789abcdefABCDEF-_=xyz%"
	accepted := 0
	for i := 0; i < 10000; i++ {
		id := "6f1e7a3c-8a4b-4c2d-9e1f-0a1b2c3d4e5f"
		extra := url.Values{"w": {"100"}, "b": {"2"}}
		q, _ := url.ParseQuery(s.Sign("GET", id, time.Hour, extra))
		method := "GET"
		field := []string{"id", "method", ParamExpires, ParamKeyID, ParamSignature, "w", "b"}[r.Intn(7)]
		mutate := func(v string) string {
			for {
				b := []byte(v)
				if len(b) == 0 {
					return "x"
				}
				b[r.Intn(len(b))] = alphabet[r.Intn(len(alphabet))]
				if string(b) != v {
					return string(b)
				}
			}
		}
		switch field {
		case "id":
			id = mutate(id)
		case "method":
			method = []string{"PUT", "HEAD", "DELETE", "get"}[r.Intn(4)]
		default:
			q.Set(field, mutate(q.Get(field)))
		}
		if strings.EqualFold(method, "get") && method != "GET" {
			method = "POST" // the method is upper-cased when signing; pick a real change
		}
		if s.Verify(method, id, q) == nil {
			accepted++
			t.Errorf("mutant accepted: %s %s %s", method, id, q.Encode())
		}
	}
	if accepted != 0 {
		t.Fatalf("%d of 10000 mutated URLs accepted", accepted)
	}
}
