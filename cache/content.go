package cache

import (
	"context"
	"errors"
	"io"
	"math"
	"os"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/blob"
	"github.com/coffer/coffer/internal/openfile"
	"github.com/maypok86/otter/v2"
	"github.com/maypok86/otter/v2/stats"
)

// ContentConfig sizes the hot-content cache.
type ContentConfig struct {
	MaxBytes int64 // total bytes held; 0 disables the cache
	MaxFile  int64 // larger files are never cached: they stream (sendfile from disk)
	// MaxOpenFiles bounds the disk blobs held open (each weighs MaxBytes/MaxOpenFiles,
	// whatever its size: its bytes stay in the kernel's page cache, not in ours). 0:
	// half the process's descriptor limit, between 256 and 16,384 (openFileBudget).
	MaxOpenFiles int64
}

// DefaultContentConfig returns the defaults: 256 MB in all, files up to 1 MB.
func DefaultContentConfig() ContentConfig {
	return ContentConfig{MaxBytes: 256 << 20, MaxFile: 1 << 20}
}

// Validate checks c.
func (c ContentConfig) Validate() error {
	if c.MaxBytes < 0 || c.MaxFile < 0 || c.MaxFile > 64<<20 || c.MaxOpenFiles < 0 {
		return coffer.Errorf(coffer.EINVALID, "content cache: sizes must be >= 0 and the largest file at most 64 MB")
	}
	return nil
}

// entryOverhead approximates the bytes an entry costs beyond its contents (key, node).
const entryOverhead = 128

// Content serves small blobs from memory or, on disk from sendfileMin up, from files
// it keeps open. Entries are keyed by blob key, which is never reused, so they need
// no invalidation (eviction is by size); Forget drops a deleted blob's entry.
//
// One Content serves every tenant: ForTenant returns a tenant's view, which shares
// the cache and its bound, reads through the tenant's blob store and keys its entries
// apart (blob keys of different tenants' stores may be equal).
type Content struct {
	blobs *blob.Store
	// keyPrefix is put before the blob key of this view's entries: "" for the
	// default tenant, "<tenant>/" for others. Tenants' blob stores may be separate
	// (a tenant's own S3 bucket), where equal keys name different bytes.
	keyPrefix string
	cfg       ContentConfig
	c         *otter.Cache[string, *entry] // nil when disabled
	stats     *stats.Counter
}

// NewContent wraps blobs.
func NewContent(blobs *blob.Store, cfg ContentConfig) (*Content, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	c := &Content{blobs: blobs, cfg: cfg, stats: stats.NewCounter()}
	if cfg.MaxBytes == 0 || cfg.MaxFile == 0 {
		return c, nil
	}
	var err error
	if cfg.MaxOpenFiles == 0 {
		cfg.MaxOpenFiles = openFileBudget()
	}
	fileWeight := max(cfg.MaxBytes/cfg.MaxOpenFiles, 1)
	c.c, err = otter.New(&otter.Options[string, *entry]{
		MaximumWeight: uint64(cfg.MaxBytes),
		Weigher: func(k string, v *entry) uint32 {
			if v.f != nil {
				return uint32(min(fileWeight, math.MaxUint32))
			}
			return uint32(len(k) + len(v.b) + entryOverhead)
		},
		OnAtomicDeletion: func(e otter.DeletionEvent[string, *entry]) {
			if e.Value != nil && e.Value.f != nil {
				e.Value.f.DropCacheRef()
			}
		},
		StatsRecorder: c.stats,
	})
	return c, err
}

// ForTenant returns tenant's view of the cache, reading through blobs (that tenant's
// blob store).
func (c *Content) ForTenant(tenant string, blobs *blob.Store) *Content {
	v := *c
	v.blobs, v.keyPrefix = blobs, tenantKey(tenant, "")
	return &v
}

// Stats returns the hit, miss and eviction counts.
func (c *Content) Stats() stats.Stats { return c.stats.Snapshot() }

// WeightedSize returns the bytes held.
func (c *Content) WeightedSize() uint64 {
	if c.c == nil {
		return 0
	}
	return c.c.WeightedSize()
}

// Forget drops blob key, which was deleted: an open file held for it would keep its
// disk space until evicted.
func (c *Content) Forget(key string) {
	if c.c != nil {
		c.c.Invalidate(c.keyPrefix + key)
	}
}

// DropTenant drops every entry of tenant, which was deleted (its blobs go with it):
// nothing reads them again (blob keys are never reused), but an open file held for
// one would keep its disk space until evicted.
func (c *Content) DropTenant(tenant string) {
	if c.c != nil && tenant != coffer.DefaultTenantID {
		dropPrefix(c.c, tenantKey(tenant, ""))
	}
}

// Open returns a reader of blob key, whose size the metadata says is size. A blob up
// to MaxFile comes from the cache (hit true) or is read whole into it first (or kept
// open, see sendfileMin); concurrent misses of one key load it once. Larger blobs are
// opened as they are.
func (c *Content) Open(ctx context.Context, key string, size int64) (r blob.Reader, hit bool, err error) {
	if c.c == nil || size > c.cfg.MaxFile || size < 0 {
		r, err = c.blobs.Open(ctx, key)
		return r, false, err
	}
	loaded := false
	var files []*openfile.Shared // opened by our loads: otter may drop a load and run another
	ck := c.keyPrefix + key
	e, err := c.c.Get(ctx, ck, otter.LoaderFunc[string, *entry](func(ctx context.Context, _ string) (*entry, error) {
		loaded = true
		e, err := c.load(ctx, key, size)
		if err == nil && e.f != nil {
			files = append(files, e.f)
		}
		return e, err
	}))
	if err == nil {
		r, hit, err = c.reader(ctx, key, e, !loaded)
	}
	if len(files) > 0 { // after reader took its reference
		c.dropUncached(ck, files)
	}
	return r, hit, err
}

// reader returns a reader of e, the cache's entry for key.
func (c *Content) reader(ctx context.Context, key string, e *entry, hit bool) (blob.Reader, bool, error) {
	if e.f == nil {
		return blob.BytesReader(key, e.b), hit, nil
	}
	if !e.f.Acquire() { // evicted and closed since Get: open it again
		r, err := c.blobs.Open(ctx, key)
		return r, false, err
	}
	return &fileReader{Reader: e.f.Reader(), key: key}, hit, nil
}

// dropUncached lets go of the cache's reference to files our loads opened that the
// cache does not hold under its key ck: otter drops a load that an invalidation (Forget) raced with,
// with no deletion event, and may load again.
func (c *Content) dropUncached(ck string, files []*openfile.Shared) {
	got, ok := c.c.GetEntryQuietly(ck)
	for _, f := range files {
		if !ok || got.Value.f != f {
			f.DropCacheRef()
		}
	}
}

// load reads a whole blob, checking it has the size the metadata promised; a large
// enough blob on disk is kept open instead.
func (c *Content) load(ctx context.Context, key string, size int64) (*entry, error) {
	r, err := c.blobs.Open(ctx, key)
	if err != nil {
		return nil, err
	}
	if f := osFileOf(r); f != nil && size >= sendfileMin {
		return c.keepOpen(r, f, size)
	}
	defer r.Close()
	buf := make([]byte, size+1)
	n, err := io.ReadFull(r, buf)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, coffer.Internal(err, "read blob")
	}
	if int64(n) != size {
		return nil, coffer.Internal(errors.New("blob size differs from metadata"), "read blob")
	}
	return &entry{b: buf[:n:n]}, nil
}

// keepOpen makes an entry of an open blob file, checking its size.
func (c *Content) keepOpen(r blob.Reader, f *os.File, size int64) (*entry, error) {
	fi, err := f.Stat()
	if err != nil || fi.Size() != size {
		r.Close()
		if err == nil {
			err = errors.New("blob size differs from metadata")
		}
		return nil, coffer.Internal(err, "read blob")
	}
	sf, err := newSharedFile(r, f, size)
	if err != nil {
		r.Close()
		return nil, coffer.Internal(err, "read blob")
	}
	return &entry{f: sf}, nil
}
