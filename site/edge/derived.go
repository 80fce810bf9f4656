package edge

import (
	"context"
	"errors"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/site"
)

// derivedTTL is a derived copy's freshness: it never goes stale, since its key
// holds the source's ETag (a new source version is a new entry); it leaves by
// eviction or purge.
const derivedTTL = 100 * 365 * 24 * time.Hour

// Derived answers req from the cache, making the copy on a miss: one Make per
// (Scope, Path, Variant, SourceETag) however many ask at once, written to disk
// under the same byte bound while the first clients read it as it grows (Size
// -1 until it is complete). A copy larger than MaxObjectSize, or one Make fails
// to write, fails its readers and is not kept; the serving layer then answers
// with the identity encoding.
func (c *Cache) Derived(ctx context.Context, req site.DerivedRequest) (*site.Object, error) {
	obj, err := c.derived(ctx, req)
	for tries := 0; errors.Is(err, errGone) && tries < 3; tries++ {
		obj, err = c.derived(ctx, req)
	}
	if errors.Is(err, errGone) {
		return nil, unavailable(err)
	}
	return obj, err
}

func (c *Cache) derived(ctx context.Context, req site.DerivedRequest) (*site.Object, error) {
	if req.Make == nil || req.Variant == "" || req.SourceETag == "" {
		return nil, coffer.Errorf(coffer.EINVALID, "edge: a derived request needs Make, Variant and SourceETag")
	}
	key := derivedKey(req)
	c.mu.RLock()
	if e := c.entries[key]; e != nil {
		obj, err := c.open(e, site.CacheHit)
		c.mu.RUnlock()
		if err == nil {
			c.stats.hits.Add(1)
			return obj, nil
		}
		return nil, coffer.Internal(err, "edge: open a derived copy")
	}
	c.mu.RUnlock()
	c.mu.Lock()
	fl := c.inflight[key]
	if fl == nil {
		if c.closed {
			c.mu.Unlock()
			return nil, unavailable(errClosed)
		}
		fl = c.startDerived(req, key)
	}
	c.mu.Unlock()
	return c.awaitDerived(ctx, fl)
}

// derivedKey is the entry key of req's copy.
func derivedKey(req site.DerivedRequest) string {
	return "d\x00" + req.Scope + "\x00" + req.Path + "\x00" + req.Variant + "\x00" + req.SourceETag
}

// startDerived launches the flight making a derived copy. Callers hold c.mu.
func (c *Cache) startDerived(req site.DerivedRequest, key string) *flight {
	fl := &flight{key: key, scope: req.Scope, path: req.Path, ready: make(chan struct{}), abandoned: true}
	fl.info = meta{
		Key: key, Scope: req.Scope, Path: req.Path, Tags: append([]string(nil), req.Tags...),
		Size: -1, ETag: derivedETag(req.SourceETag, req.Variant), Type: req.Type,
		Encoding: req.Variant, Stored: c.cfg.now(), TTL: derivedTTL,
	}
	c.inflight[key] = fl
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		c.makeDerived(fl, req)
	}()
	return fl
}

// makeDerived runs Make into a fill.
func (c *Cache) makeDerived(fl *flight, req site.DerivedRequest) {
	reserved := min(fillChunk, c.cfg.MaxObjectSize)
	if !c.reserve(reserved) {
		c.settle(fl, outFailed, errNoRoom)
		return
	}
	w, err := c.startFill(fl, reserved)
	if err != nil {
		c.settle(fl, outFailed, err)
		return
	}
	c.settle(fl, outBody, nil)
	c.stats.derived.Add(1)
	err = req.Make(c.ctx, w)
	if err == nil && c.ctx.Err() != nil {
		err = c.ctx.Err()
	}
	c.finishFill(fl, w, err)
}

// awaitDerived waits for the copy's fill to start and follows it.
func (c *Cache) awaitDerived(ctx context.Context, fl *flight) (*site.Object, error) {
	select {
	case <-fl.ready:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if fl.out != outBody {
		return nil, unavailable(fl.err)
	}
	return c.follow(fl)
}

// derivedETag is a derived copy's entity tag: the source's, marked with the
// variant (as nginx's gzip does for weak tags), so caches tell encodings apart.
func derivedETag(source, variant string) string {
	weak := ""
	if len(source) > 2 && source[:2] == "W/" {
		weak, source = "W/", source[2:]
	}
	if len(source) >= 2 && source[0] == '"' && source[len(source)-1] == '"' {
		return weak + source[:len(source)-1] + "-" + variant + `"`
	}
	return weak + `"` + source + "-" + variant + `"`
}

var errClosed = errors.New("edge: closed")
