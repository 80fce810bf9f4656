package edge

import (
	"github.com/coffer/coffer/site"
)

var _ site.FastEdge = (*Cache)(nil)

// Peek answers req from what the cache holds, without the origin and without
// counting: a fresh committed copy (status HIT), or missing when the origin is
// known not to have the key (a negative entry still valid). Anything else — no
// copy, a stale one, a fill in progress — is (nil, false): only Get can answer
// it. Peek starts nothing, so a caller that then gives up has changed nothing
// but the entry's SIEVE bit (it was read). Get answers its hits through Peek.
func (c *Cache) Peek(req site.EdgeRequest) (obj *site.Object, missing bool) {
	if req.Origin == nil || req.Key == "" || req.NoStore {
		return nil, false
	}
	key := entryKey(req.Scope, req.Origin.ID(), req.Key)
	now := c.cfg.now()
	c.mu.RLock()
	defer c.mu.RUnlock()
	if e := c.entries[key]; e != nil && e.fresh(now) {
		obj, err := c.open(e, site.CacheHit)
		if err != nil {
			return nil, false
		}
		return obj, false
	}
	return nil, c.neg.has(key, now)
}

// PeekDerived answers req from the derived copies the cache holds, without making
// one and without counting; nil when there is none (Derived makes it).
func (c *Cache) PeekDerived(req site.DerivedRequest) *site.Object {
	if req.Variant == "" || req.SourceETag == "" {
		return nil
	}
	key := derivedKey(req)
	c.mu.RLock()
	defer c.mu.RUnlock()
	e := c.entries[key]
	if e == nil {
		return nil
	}
	obj, err := c.open(e, site.CacheHit)
	if err != nil {
		return nil
	}
	return obj
}

// CountPeeks counts, as Get and Derived would have, the hits and negative hits of
// peeks whose answers were served.
func (c *Cache) CountPeeks(hits, negativeHits int) {
	if hits > 0 {
		c.stats.hits.Add(uint64(hits))
	}
	if negativeHits > 0 {
		c.stats.negativeHits.Add(uint64(negativeHits))
	}
}
