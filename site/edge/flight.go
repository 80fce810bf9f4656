package edge

import (
	"context"
	"errors"
	"io/fs"
	"sync"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/site"
)

// outcome is what a flight (one upstream fetch) came to.
type outcome int

const (
	outBody        outcome = iota + 1 // a cacheable body, filling: readers follow fl.fill
	outNotModified                    // 304: the stale entry was renewed
	outNotFound                       // 404: remembered for the negative TTL
	outFailed                         // the origin failed (or its breaker is open)
	outBypass                         // not cacheable: the creator streams it through
)

// flight is one upstream fetch for a key, shared by every request that misses
// on it while it runs (request coalescing). It stays in Cache.inflight until its
// body is committed or fails, so requests arriving during the fill join it too.
type flight struct {
	key, scope, path string
	origin           string        // the origin's ID ("" for derived copies)
	ready            chan struct{} // closed once the outcome is known

	// Set before ready closes.
	out    outcome
	err    error
	fill   *fill
	info   meta   // the object's description (outBody)
	stale  *entry // the entry that was revalidated (outNotModified)
	purged bool   // under Cache.mu: a purge matched it while it ran; not committed

	mu        sync.Mutex
	direct    *site.Fetched // outBypass: handed to the creator
	abandoned bool          // the creator left (or there is none): close direct
}

// take hands the bypassed answer to the flight's creator (nil if none) and
// marks the flight abandoned so an answer settled later is closed, not leaked.
func (fl *flight) take() *site.Fetched {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	d := fl.direct
	fl.direct, fl.abandoned = nil, true
	return d
}

// slow answers a request the read-locked fast path could not: a stale entry, a
// miss, an expired negative entry.
//
// tries counts the times a request joined a fill that was committed and then
// evicted or purged before it could open it; it is asked again, a few times.
func (c *Cache) slow(ctx context.Context, req site.EdgeRequest, key string, tries int) (*site.Object, error) {
	now := c.cfg.now()
	c.mu.Lock()
	e := c.entries[key]
	if e != nil && e.fresh(now) {
		obj, err := c.open(e, site.CacheHit)
		c.mu.Unlock()
		if err == nil {
			c.stats.hits.Add(1)
			return obj, nil
		}
		return nil, coffer.Internal(err, "edge: open a cached body")
	}
	if c.neg.has(key, now) {
		c.mu.Unlock()
		c.stats.negativeHits.Add(1)
		return nil, notFound(req.Key)
	}
	if c.closed {
		c.mu.Unlock()
		return nil, unavailable(errClosed)
	}
	if e != nil && e.servableStale(now) {
		if c.inflight[key] == nil {
			c.start(req, key, e, false)
		}
		obj, err := c.open(e, site.CacheStale)
		c.mu.Unlock()
		if err == nil {
			c.stats.stale.Add(1)
			return obj, nil
		}
		return nil, coffer.Internal(err, "edge: open a cached body")
	}
	fl, creator := c.inflight[key], false
	if fl == nil {
		fl, creator = c.start(req, key, e, true), true
	}
	c.mu.Unlock()
	obj, err := c.await(ctx, req, fl, e, creator)
	if errors.Is(err, errGone) {
		if tries < 3 {
			return c.slow(ctx, req, key, tries+1)
		}
		return nil, unavailable(err)
	}
	return obj, err
}

// start launches a flight for key; stale is the entry to revalidate (nil: a
// plain fetch). Callers hold c.mu for writing.
func (c *Cache) start(req site.EdgeRequest, key string, stale *entry, hasCreator bool) *flight {
	fl := &flight{key: key, scope: req.Scope, path: req.Path, origin: req.Origin.ID(), ready: make(chan struct{}), abandoned: !hasCreator}
	c.inflight[key] = fl
	var inm string
	var ims time.Time
	if stale != nil {
		inm, ims = stale.ETag, stale.LastModified
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		c.run(fl, req, stale, inm, ims)
	}()
	return fl
}

// await waits for fl's outcome and answers from it.
func (c *Cache) await(ctx context.Context, req site.EdgeRequest, fl *flight, stale *entry, creator bool) (*site.Object, error) {
	select {
	case <-fl.ready:
	case <-ctx.Done():
		if creator {
			if d := fl.take(); d != nil {
				d.Body.Close()
			}
		}
		return nil, ctx.Err()
	}
	switch fl.out {
	case outBody:
		return c.follow(fl)
	case outNotModified:
		return c.openLive(fl.stale, site.CacheRevalidated, &c.stats.revalidated)
	case outNotFound:
		return nil, notFound(req.Key)
	case outBypass:
		if creator {
			if d := fl.take(); d != nil {
				c.stats.bypass.Add(1)
				return passThrough(d), nil
			}
		}
		return c.direct(ctx, req)
	}
	if stale != nil && stale.servableOnError(c.cfg.now()) {
		if obj, err := c.openLive(stale, site.CacheStale, &c.stats.stale); err == nil {
			return obj, nil
		}
	}
	return nil, unavailable(fl.err)
}

// follow answers with a reader following fl's fill.
func (c *Cache) follow(fl *flight) (*site.Object, error) {
	r, err := fl.fill.reader()
	if errors.Is(err, fs.ErrNotExist) {
		return nil, errGone
	}
	if err != nil {
		return nil, unavailable(err)
	}
	c.stats.misses.Add(1)
	m := &fl.info
	size := m.Size
	return &site.Object{
		Content: r, Size: size, ModTime: m.LastModified, ETag: m.ETag, Type: m.Type,
		Encoding: m.Encoding, Tags: m.Tags, CacheControl: m.CacheControl,
		Cache: site.CacheMiss, Closer: r,
	}, nil
}

// openLive opens e if it is still in the index (a purge may have dropped it).
func (c *Cache) openLive(e *entry, status site.CacheStatus, n interface{ Add(uint64) uint64 }) (*site.Object, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.entries[e.Key] != e {
		return nil, coffer.Errorf(coffer.EUNAVAILABLE, "edge: the entry was purged while the origin was asked; retry")
	}
	obj, err := c.open(e, status)
	if err != nil {
		return nil, coffer.Internal(err, "edge: open a cached body")
	}
	n.Add(1)
	return obj, nil
}

// settle publishes fl's outcome; outcomes without a body end the flight.
func (c *Cache) settle(fl *flight, out outcome, err error) {
	fl.out, fl.err = out, err
	if out != outBody {
		c.mu.Lock()
		if c.inflight[fl.key] == fl {
			delete(c.inflight, fl.key)
		}
		c.mu.Unlock()
	}
	close(fl.ready)
}

// errGone: a fill was committed, then evicted or purged, before a request that
// joined it opened it.
var errGone = errors.New("edge: the object went before it could be opened")

// errBreakerOpen fails fetches from an origin whose circuit breaker is open.
var errBreakerOpen = errors.New("edge: the origin's circuit breaker is open")
