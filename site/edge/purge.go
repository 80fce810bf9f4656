package edge

import (
	"strings"

	"github.com/coffer/coffer/site"
)

// Purge drops what p names from scope (see site.Purge) and returns how many
// entries went: committed entries (derived copies included, since they carry
// their source's path), remembered 404s, and fills in progress (which then
// finish for their readers but are not kept). It finds entries by the scope's
// path and tag indexes; a prefix scans only the scope's own entries.
func (c *Cache) Purge(scope string, p site.Purge) int {
	all := len(p.Paths) == 0 && len(p.Prefixes) == 0 && len(p.Tags) == 0
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	if x := c.scopes[scope]; x != nil {
		for _, e := range matching(x, p, all) {
			c.drop(e)
			n++
		}
	}
	for key, v := range c.neg.m {
		if v.scope == scope && (all || pathMatches(v.path, p)) {
			delete(c.neg.m, key)
			n++
		}
	}
	for _, fl := range c.inflight {
		if fl.scope == scope && !fl.purged && (all || pathMatches(fl.path, p) || tagMatches(fl.info.Tags, p)) {
			fl.purged = true
			n++
		}
	}
	return n
}

// PurgeScopes drops everything of every scope whose name starts with prefix (a
// deleted tenant's sites: "<tenant>/") and returns how many entries went, as Purge
// does for each.
func (c *Cache) PurgeScopes(prefix string) int {
	scopes := map[string]bool{}
	c.mu.RLock()
	for s := range c.scopes {
		scopes[s] = true
	}
	for _, v := range c.neg.m {
		scopes[v.scope] = true
	}
	for _, fl := range c.inflight {
		scopes[fl.scope] = true
	}
	c.mu.RUnlock()
	n := 0
	for s := range scopes {
		if strings.HasPrefix(s, prefix) {
			n += c.Purge(s, site.Purge{})
		}
	}
	return n
}

// matching lists the entries of x that p names.
func matching(x *scopeIndex, p site.Purge, all bool) []*entry {
	var out []*entry
	seen := map[*entry]bool{}
	add := func(e *entry) {
		if !seen[e] {
			seen[e] = true
			out = append(out, e)
		}
	}
	if all {
		for e := range x.all {
			add(e)
		}
		return out
	}
	for _, path := range p.Paths {
		for e := range x.byPath[path] {
			add(e)
		}
	}
	for _, t := range p.Tags {
		for e := range x.byTag[t] {
			add(e)
		}
	}
	if len(p.Prefixes) > 0 {
		for path, set := range x.byPath {
			if hasAnyPrefix(path, p.Prefixes) {
				for e := range set {
					add(e)
				}
			}
		}
	}
	return out
}

func pathMatches(path string, p site.Purge) bool {
	for _, q := range p.Paths {
		if q == path {
			return true
		}
	}
	return hasAnyPrefix(path, p.Prefixes)
}

func hasAnyPrefix(path string, prefixes []string) bool {
	for _, q := range prefixes {
		if strings.HasPrefix(path, q) {
			return true
		}
	}
	return false
}

func tagMatches(tags []string, p site.Purge) bool {
	for _, t := range tags {
		for _, q := range p.Tags {
			if t == q {
				return true
			}
		}
	}
	return false
}
