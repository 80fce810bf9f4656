package edge

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/coffer/coffer/site"
)

// run is a flight's goroutine: it asks the origin (through its circuit breaker)
// and settles the flight; a cacheable body is then written to disk while the
// flight's readers follow it. It runs under the cache's context, not a client's:
// a fill goes on when the client that started it leaves.
func (c *Cache) run(fl *flight, req site.EdgeRequest, stale *entry, inm string, ims time.Time) {
	id := req.Origin.ID()
	if !c.breakers.allow(id, c.cfg.now()) {
		c.settle(fl, outFailed, errBreakerOpen)
		return
	}
	c.stats.fetches.Add(1)
	f, err := req.Origin.Fetch(c.ctx, req.Key, inm, ims)
	if err != nil {
		c.originFailed(id)
		c.settle(fl, outFailed, err)
		return
	}
	switch f.Status {
	case http.StatusOK:
		c.breakers.success(id) // a broken body counts as a failure again
		c.received(fl, req, f)
	case http.StatusNotModified:
		c.breakers.success(id)
		c.notModified(fl, req, stale, f)
	case http.StatusNotFound:
		c.breakers.success(id)
		c.notFoundAt(fl, req)
	default:
		closeBody(f)
		c.originFailed(id)
		c.settle(fl, outFailed, fmt.Errorf("edge: the origin answered %d", f.Status))
	}
}

// originFailed counts a failure against origin id's breaker.
func (c *Cache) originFailed(id string) {
	if c.breakers.failure(id, c.cfg.now()) {
		c.stats.breakerOpens.Add(1)
		c.log.Warn("edge: origin circuit breaker open", "origin", id)
	}
}

func closeBody(f *site.Fetched) {
	if f.Body != nil {
		f.Body.Close()
	}
}

// notModified renews the revalidated entry's freshness from the 304's headers.
func (c *Cache) notModified(fl *flight, req site.EdgeRequest, stale *entry, f *site.Fetched) {
	closeBody(f)
	if stale == nil {
		c.settle(fl, outFailed, fmt.Errorf("edge: the origin answered 304 to an unconditional request"))
		return
	}
	cc := f.Header.Get("Cache-Control")
	if cc == "" {
		cc = stale.CacheControl
	}
	fr := freshnessOf(cc, req.Policy)
	c.mu.Lock()
	live := c.entries[stale.Key] == stale
	if live {
		stale.Stored, stale.CacheControl = c.cfg.now(), cc
		stale.TTL, stale.SWR, stale.SIE, stale.Revalidate = fr.ttl, fr.swr, fr.sie, fr.revalidate
	}
	m := stale.meta
	c.mu.Unlock()
	if live {
		if err := writeMeta(stale.file+".meta", &m); err != nil {
			c.log.Warn("edge: rewrite a sidecar", "err", err)
		}
	}
	fl.stale = stale
	c.settle(fl, outNotModified, nil)
}

// notFoundAt remembers a 404 and drops the entry it replaces.
func (c *Cache) notFoundAt(fl *flight, req site.EdgeRequest) {
	_, _, _, neg := policyDefaults(req.Policy)
	c.mu.Lock()
	if e := c.entries[fl.key]; e != nil {
		c.drop(e)
	}
	if neg > 0 && !fl.purged {
		c.neg.add(fl.key, negative{until: c.cfg.now().Add(neg), scope: fl.scope, path: fl.path})
	}
	c.mu.Unlock()
	c.settle(fl, outNotFound, nil)
}

// received handles a 200: not cacheable (no-store, private, bigger than
// MaxObjectSize, no room) → bypass; else the fill.
func (c *Cache) received(fl *flight, req site.EdgeRequest, f *site.Fetched) {
	fr := freshnessOf(f.Header.Get("Cache-Control"), req.Policy)
	size := f.Size
	if !fr.store || size > c.cfg.MaxObjectSize {
		c.bypass(fl, f, fr.store)
		return
	}
	reserve := size
	if reserve < 0 {
		reserve = min(fillChunk, c.cfg.MaxObjectSize)
	}
	if !c.reserve(reserve) {
		c.bypass(fl, f, true)
		return
	}
	info := c.describe(fl, req, f, fr)
	c.mu.Lock() // Purge reads fl.info.Tags
	fl.info = info
	c.mu.Unlock()
	c.fillFrom(fl, f, reserve)
}

// bypass hands f to the flight's creator to stream through uncached; keep says
// whether an existing entry may stay (no-store drops it).
func (c *Cache) bypass(fl *flight, f *site.Fetched, keep bool) {
	if !keep {
		c.mu.Lock()
		if e := c.entries[fl.key]; e != nil {
			c.drop(e)
		}
		c.mu.Unlock()
	}
	fl.mu.Lock()
	if fl.abandoned {
		closeBody(f)
	} else {
		fl.direct = f
	}
	fl.mu.Unlock()
	c.settle(fl, outBypass, nil)
}

// describe builds the entry's metadata from the origin's answer.
func (c *Cache) describe(fl *flight, req site.EdgeRequest, f *site.Fetched, fr freshness) meta {
	h := f.Header
	lm, _ := http.ParseTime(h.Get("Last-Modified"))
	return meta{
		Key: fl.key, Scope: req.Scope, Path: req.Path,
		Tags: mergeTags(req.Tags, h.Get("Surrogate-Key")), Size: f.Size,
		ETag: h.Get("ETag"), LastModified: lm, Type: h.Get("Content-Type"),
		Encoding: h.Get("Content-Encoding"), CacheControl: h.Get("Cache-Control"),
		Stored: c.cfg.now(), TTL: fr.ttl, SWR: fr.swr, SIE: fr.sie, Revalidate: fr.revalidate,
	}
}

// mergeTags is the route's tags and the upstream's space-separated Surrogate-Key.
func mergeTags(route []string, surrogate string) []string {
	out := append([]string(nil), route...)
	for _, t := range strings.Fields(surrogate) {
		dup := false
		for _, o := range out {
			dup = dup || o == t
		}
		if !dup {
			out = append(out, t)
		}
	}
	return out
}
