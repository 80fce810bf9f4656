package auth

import (
	"fmt"
	"testing"
	"time"

	"github.com/coffer/coffer"
	"github.com/golang-jwt/jwt/v5"
)

// A verified token is served from the cache until its exp (plus skew), never after.
func TestTokenCacheHonoursExpiry(t *testing.T) {
	a := newTestAuth(t, hsSecret(t, nil))
	clock := testNow
	a.jwt.now = func() time.Time { return clock }
	tok := hsToken(func(c jwt.MapClaims) { c["exp"] = testNow.Add(30 * time.Second).Unix() })(t)
	p1, err := a.Principal(request(tok, ""))
	if err != nil {
		t.Fatal(err)
	}
	p2, err := a.Principal(request(tok, ""))
	if err != nil || p2 != p1 {
		t.Fatalf("second request: %p %v, want the cached %p", p2, err, p1)
	}
	clock = testNow.Add(31 * time.Second)
	if _, err := a.Principal(request(tok, "")); coffer.ErrorCode(err) != coffer.EUNAUTHORIZED {
		t.Fatalf("expired cached token: err = %v, want EUNAUTHORIZED", err)
	}
}

// The TTL bounds an entry even for a token valid much longer; the role header is
// part of the key, and a role the token does not allow is refused from cache too.
func TestTokenCacheKeys(t *testing.T) {
	a := newTestAuth(t, hsSecret(t, nil))
	clock := testNow
	a.jwt.now = func() time.Time { return clock }
	tok := sign(t, jwt.SigningMethodHS256, []byte(testHMAC), hasuraClaims(), "")
	user, err := a.Principal(request(tok, ""))
	if err != nil {
		t.Fatal(err)
	}
	editor, err := a.Principal(request(tok, "editor"))
	if err != nil || editor.Role != "editor" || user.Role != "user" {
		t.Fatalf("roles: %+v %+v %v", user, editor, err)
	}
	for range 2 {
		if _, err := a.Principal(request(tok, "admin")); coffer.ErrorCode(err) != coffer.EFORBIDDEN {
			t.Fatalf("role not allowed: err = %v", err)
		}
	}
	key := tokenCacheKey(tok, "")
	if _, ok := a.jwt.cache.get(key, testNow.Add(tokenCacheTTL-time.Second)); !ok {
		t.Fatal("entry missing before its TTL")
	}
	if _, ok := a.jwt.cache.get(key, testNow.Add(tokenCacheTTL)); ok {
		t.Fatal("entry served after its TTL")
	}
	clock = testNow.Add(tokenCacheTTL + time.Second)
	again, err := a.Principal(request(tok, ""))
	if err != nil || again == user {
		t.Fatalf("after the TTL the token must be verified again: %p %v", again, err)
	}
}

func TestTokenCacheBounded(t *testing.T) {
	c := newTokenCache(100)
	p := &coffer.Principal{Role: "user"}
	for i := range 1000 {
		c.put(tokenKey{token: fmt.Sprint(i)}, cachedPrincipal{p: p, deadline: testNow.Add(time.Minute)}, testNow)
	}
	if n := c.len(); n > 100 {
		t.Fatalf("%d entries, bound 100", n)
	}
	// Expired entries make room first.
	c = newTokenCache(2)
	c.put(tokenKey{token: "old"}, cachedPrincipal{p: p, deadline: testNow.Add(time.Second)}, testNow)
	c.put(tokenKey{token: "live"}, cachedPrincipal{p: p, deadline: testNow.Add(time.Hour)}, testNow)
	c.put(tokenKey{token: "new"}, cachedPrincipal{p: p, deadline: testNow.Add(time.Hour)}, testNow.Add(time.Minute))
	if _, ok := c.get(tokenKey{token: "live"}, testNow.Add(time.Minute)); !ok {
		t.Fatal("a live entry was evicted while an expired one could go")
	}
	c.put(tokenKey{token: string(make([]byte, tokenCacheMaxKey+1))}, cachedPrincipal{p: p, deadline: testNow.Add(time.Hour)}, testNow)
	if c.len() > 2 {
		t.Fatal("oversized key cached")
	}
}
