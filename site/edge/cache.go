package edge

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/internal/openfile"
	"github.com/coffer/coffer/site"
)

// Cache is the pull-through disk cache (see the package doc).
type Cache struct {
	cfg     Config
	log     *slog.Logger
	dataDir string
	tmpDir  string

	ctx    context.Context // canceled by Close: fills and revalidations stop
	cancel context.CancelFunc
	wg     sync.WaitGroup // fills and background revalidations

	mu       sync.RWMutex
	entries  map[string]*entry
	scopes   map[string]*scopeIndex
	inflight map[string]*flight
	order    sieve
	used     int64 // committed body bytes + reservations of fills in progress
	neg      negatives
	closed   bool

	breakers breakers
	stats    counters
	// openFiles counts the entries keeping their file open (entry.fd), up to
	// maxOpen.
	openFiles atomic.Int64
	maxOpen   int64
}

var _ site.Edge = (*Cache)(nil)

// New opens the cache in cfg.Dir, rebuilding its index from the files a
// previous run left there (see restart.go).
func New(cfg Config, log *slog.Logger) (*Cache, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c := &Cache{
		cfg: cfg, log: log,
		dataDir:  filepath.Join(cfg.Dir, "data"),
		tmpDir:   filepath.Join(cfg.Dir, "tmp"),
		entries:  map[string]*entry{},
		scopes:   map[string]*scopeIndex{},
		inflight: map[string]*flight{},
		maxOpen:  int64(cfg.maxOpenFiles()),
		neg:      negatives{m: map[string]negative{}, max: cfg.MaxNegative},
		breakers: breakers{m: map[string]*breaker{}, failures: cfg.BreakerFailures,
			base: cfg.BreakerCooldown, max: cfg.BreakerMaxCooldown},
	}
	if err := c.load(); err != nil {
		return nil, err
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	return c, nil
}

// Close stops fills and background revalidations and waits for them. Objects
// already handed out stay readable until closed (a fill stopped by Close fails
// its readers).
func (c *Cache) Close() error {
	c.mu.Lock()
	c.closed = true
	for _, e := range c.entries {
		c.closeFile(e)
	}
	c.mu.Unlock()
	c.cancel()
	c.wg.Wait()
	return nil
}

// entryKey keys an upstream object by scope, origin and key, so one tenant's
// purge never drops another's entry even when both use the same origin.
func entryKey(scope, origin, key string) string {
	return "o\x00" + scope + "\x00" + origin + "\x00" + key
}

// fileName is a fresh body file name for key: its digest and a random suffix,
// so a new version never reuses the path an older one's readers hold.
func fileName(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:16]) + "-" + rand.Text()[:12]
}

// Get answers req from the cache or its origin; see site.Edge.
func (c *Cache) Get(ctx context.Context, req site.EdgeRequest) (*site.Object, error) {
	if req.Origin == nil || req.Key == "" {
		return nil, coffer.Errorf(coffer.EINVALID, "edge: a request needs an origin and a key")
	}
	if req.NoStore {
		return c.direct(ctx, req)
	}
	switch obj, missing := c.Peek(req); {
	case obj != nil:
		c.stats.hits.Add(1)
		return obj, nil
	case missing:
		c.stats.negativeHits.Add(1)
		return nil, notFound(req.Key)
	}
	key := entryKey(req.Scope, req.Origin.ID(), req.Key)
	return c.slow(ctx, req, key, 0)
}

// open opens e's body for a client. Callers hold c.mu (read or write), so e's
// file cannot be unlinked between the lookup and the open; once open, it stays
// readable after an eviction or purge. The entry keeps its file open for the
// next hits (openfile: one descriptor shared by every reader, read at each one's
// offset and sent with sendfile after the header) while the cache holds fewer than
// MaxOpenFiles; drop closes it once its last reader is done.
func (c *Cache) open(e *entry, status site.CacheStatus) (*site.Object, error) {
	r, err := c.reader(e)
	if err != nil {
		return nil, err
	}
	e.visited.Store(true)
	return &site.Object{
		Content: r, Size: e.Size, ModTime: e.LastModified, ETag: e.ETag,
		Type: e.Type, Encoding: e.Encoding, Tags: e.Tags,
		CacheControl: e.CacheControl, Cache: status, Closer: r,
	}, nil
}

// reader returns a reader of e's body holding a reference to its open file: the
// one e keeps, or a new one, kept in e if the budget allows. Callers hold c.mu.
func (c *Cache) reader(e *entry) (*openfile.Reader, error) {
	if sf := e.fd.Load(); sf != nil && sf.Acquire() {
		return sf.Reader(), nil
	}
	f, err := os.Open(e.file)
	if err != nil {
		return nil, err
	}
	sf, err := openfile.New(f, e.Size, 0, nil) // one reference: the reader's, or e's
	if err != nil {
		f.Close()
		return nil, err
	}
	if c.closed || c.entries[e.Key] != e { // closed, or out of the index: nobody would close a kept file
		return sf.Reader(), nil
	}
	if c.openFiles.Add(1) <= c.maxOpen && e.fd.CompareAndSwap(nil, sf) {
		sf.Acquire() // the reader's; e holds New's
		return sf.Reader(), nil
	}
	c.openFiles.Add(-1) // over the budget, or another hit kept its file first
	return sf.Reader(), nil
}

// closeFile lets go of the open file e keeps, if any: it closes when its last
// reader is done. Callers hold c.mu for writing (or e is out of the index).
func (c *Cache) closeFile(e *entry) {
	if sf := e.fd.Swap(nil); sf != nil {
		c.openFiles.Add(-1)
		sf.DropCacheRef()
	}
}

func notFound(key string) error {
	return coffer.Errorf(coffer.ENOTFOUND, "%s not found at the origin", key)
}

func unavailable(err error) error {
	return &coffer.Error{Code: coffer.EUNAVAILABLE, Message: "the origin is unavailable", Err: err}
}

// negatives remembers upstream 404s until they expire, forgetting the oldest
// when there are max of them.
type negatives struct {
	m     map[string]negative
	order []string // insertion order, for forgetting the oldest
	max   int
}

type negative struct {
	until time.Time
	scope string
	path  string
}

func (n *negatives) has(key string, now time.Time) bool {
	v, ok := n.m[key]
	return ok && now.Before(v.until)
}

// add remembers key as missing until until. Callers hold c.mu for writing.
func (n *negatives) add(key string, v negative) {
	if n.max == 0 {
		return
	}
	for len(n.m) >= n.max && len(n.order) > 0 {
		delete(n.m, n.order[0])
		n.order = n.order[1:]
	}
	if _, ok := n.m[key]; !ok {
		n.order = append(n.order, key)
	}
	n.m[key] = v
	if len(n.order) > 2*n.max+16 { // compact keys forgotten by purges
		n.order = n.liveOrder()
	}
}

func (n *negatives) liveOrder() []string {
	out := make([]string, 0, len(n.m))
	for _, k := range n.order {
		if _, ok := n.m[k]; ok {
			out = append(out, k)
		}
	}
	return out
}

// Stats are the cache's counters for /metrics. Hits, Misses, Stale,
// Revalidated, NegativeHits and Bypass count answers by their cache status (a
// request that joined a fill is a miss); the rest count work.
type Stats struct {
	Hits, Misses, Stale, Revalidated, NegativeHits uint64
	Bypass                                         uint64 // answers streamed through without caching
	UpstreamFetches                                uint64 // requests to origins (fills, revalidations, bypasses)
	NotModified                                    uint64 // 304s from origins (background revalidations too)
	FillErrors, Evictions                          uint64
	BreakerOpens                                   uint64
	Derived                                        uint64 // derived copies made
	BytesOnDisk                                    int64  // committed bodies + reservations of fills in progress
	Entries                                        int
}

type counters struct {
	hits, misses, stale, revalidated, negativeHits, bypass atomic.Uint64
	fetches, notModified, fillErrors, evictions            atomic.Uint64
	breakerOpens, derived                                  atomic.Uint64
}

// Stats returns the counters and the disk use.
func (c *Cache) Stats() Stats {
	c.mu.RLock()
	used, n := c.used, len(c.entries)
	c.mu.RUnlock()
	s := &c.stats
	return Stats{
		Hits: s.hits.Load(), Misses: s.misses.Load(), Stale: s.stale.Load(),
		Revalidated: s.revalidated.Load(), NegativeHits: s.negativeHits.Load(),
		Bypass: s.bypass.Load(), UpstreamFetches: s.fetches.Load(), NotModified: s.notModified.Load(),
		FillErrors: s.fillErrors.Load(), Evictions: s.evictions.Load(),
		BreakerOpens: s.breakerOpens.Load(), Derived: s.derived.Load(),
		BytesOnDisk: used, Entries: n,
	}
}
