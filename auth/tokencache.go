package auth

import (
	"sync"
	"time"

	"github.com/coffer/coffer"
)

// Verified-token cache. Verifying a token (a signature check, JSON decoding of the
// claims, building the session) costs more than the rest of a cached download, and a
// client sends the same token with every request until it expires. So a token that
// verified is remembered, with the x-hasura-role header it came with, until the
// earlier of its exp (plus the allowed skew) and tokenCacheTTL. The TTL bounds how
// long a token stays accepted after a change the cache cannot see; with a JWKS, a hit
// also needs the token's key id still in the set (so a key removed from the set stops
// its tokens at the next refresh), and tokens without a kid are not cached. Failures
// are never cached: a bad token always costs a full check. Tokens larger than
// tokenCacheMaxKey are not cached, so the cache holds at most about
// tokenCacheEntries × tokenCacheMaxKey bytes of keys (40 MB worst case, a few MB in
// practice).
const (
	tokenCacheTTL     = time.Minute
	tokenCacheEntries = 10_000
	tokenCacheMaxKey  = 4 << 10
)

type cachedPrincipal struct {
	p        *coffer.Principal
	kid      string // key id the token named; with a JWKS the key must still be there
	deadline time.Time
}

// tokenCache maps role header + token to the principal it verified to. Safe for
// concurrent use. When full, an arbitrary entry (Go's map iteration order) makes
// room: cheap, and good enough against a working set that exceeds the bound.
type tokenCache struct {
	mu      sync.RWMutex
	entries map[tokenKey]cachedPrincipal
	max     int
}

func newTokenCache(max int) *tokenCache {
	return &tokenCache{entries: make(map[tokenKey]cachedPrincipal), max: max}
}

// tokenKey is a cache key: a struct of the request's strings, so a lookup builds
// nothing.
type tokenKey struct{ role, token string }

func tokenCacheKey(token, roleHeader string) tokenKey {
	return tokenKey{role: roleHeader, token: token}
}

func (k tokenKey) size() int { return len(k.role) + len(k.token) }

// get returns the entry cached for key if its deadline has not passed at now. The
// principal is shared: callers must not modify it.
func (c *tokenCache) get(key tokenKey, now time.Time) (cachedPrincipal, bool) {
	c.mu.RLock()
	e, ok := c.entries[key]
	c.mu.RUnlock()
	if !ok || !now.Before(e.deadline) {
		return cachedPrincipal{}, false
	}
	return e, true
}

// put remembers e for key until e.deadline; now is the current time.
func (c *tokenCache) put(key tokenKey, e cachedPrincipal, now time.Time) {
	if key.size() > tokenCacheMaxKey {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.entries[key]; !ok && len(c.entries) >= c.max {
		c.evict(now)
	}
	c.entries[key] = e
}

// evict drops expired entries seen in a short scan, or failing that one entry.
func (c *tokenCache) evict(now time.Time) {
	dropped, seen := false, 0
	for k, e := range c.entries {
		if !now.Before(e.deadline) {
			delete(c.entries, k)
			dropped = true
		}
		if seen++; seen >= 64 {
			break
		}
	}
	if dropped {
		return
	}
	for k := range c.entries {
		delete(c.entries, k)
		return
	}
}

func (c *tokenCache) len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.entries)
}
