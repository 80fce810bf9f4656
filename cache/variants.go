package cache

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/blob"
	"github.com/coffer/coffer/imaging"
	"github.com/maypok86/otter/v2"
	"github.com/maypok86/otter/v2/stats"
)

// VariantConfig sizes the transformed-variant cache.
type VariantConfig struct {
	MaxBytes   int64 // memory tier; 0 disables it
	Persist    bool  // keep variants in the blob store too (survive restarts, shared by nodes)
	MaxPerFile int   // variants persisted per file at most; more are kept in memory only
	MaxVariant int64 // larger variants are never cached
}

// DefaultVariantConfig returns the defaults: 64 MB in memory, persisted, 20 per file,
// variants up to 16 MB.
func DefaultVariantConfig() VariantConfig {
	return VariantConfig{MaxBytes: 64 << 20, Persist: true, MaxPerFile: 20, MaxVariant: 16 << 20}
}

// Validate checks c.
func (c VariantConfig) Validate() error {
	if c.MaxBytes < 0 || c.MaxPerFile < 0 || c.MaxVariant < 0 || c.MaxVariant > 1<<30 {
		return coffer.Errorf(coffer.EINVALID, "variant cache: sizes must be >= 0 (a variant at most 1 GB)")
	}
	return nil
}

// Variants caches transformed images. An entry is keyed by file id, the source's
// etag and the canonical transform parameters, so a replaced file (new etag) never
// gets an old variant; Forget removes a file's variants when it is replaced or
// deleted. Two tiers: memory (byte-bounded) and, optionally, the blob store.
//
// One Variants serves every tenant, as Content does (ForTenant): the memory tier is
// shared and keyed apart by tenant, the store tier is the tenant's blob store.
type Variants struct {
	cfg       VariantConfig
	blobs     *blob.Store
	keyPrefix string                       // see Content.keyPrefix
	mem       *otter.Cache[string, []byte] // nil when the memory tier is off
	stats     *stats.Counter
	log       *slog.Logger
}

// NewVariants returns a variant cache persisting into blobs.
func NewVariants(blobs *blob.Store, cfg VariantConfig, log *slog.Logger) (*Variants, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	v := &Variants{cfg: cfg, blobs: blobs, stats: stats.NewCounter(), log: log}
	if cfg.MaxBytes > 0 {
		var err error
		v.mem, err = otter.New(&otter.Options[string, []byte]{
			MaximumWeight: uint64(cfg.MaxBytes),
			Weigher:       func(k string, b []byte) uint32 { return uint32(min(len(k)+len(b)+entryOverhead, 1<<31)) },
			StatsRecorder: v.stats,
		})
		if err != nil {
			return nil, err
		}
	}
	return v, nil
}

// ForTenant returns tenant's view of the cache, persisting into blobs (that tenant's
// blob store).
func (v *Variants) ForTenant(tenant string, blobs *blob.Store) *Variants {
	c := *v
	c.blobs, c.keyPrefix = blobs, tenantKey(tenant, "")
	return &c
}

// DropTenant drops the memory tier's variants of tenant, which was deleted (the
// store tier goes with the tenant's blobs). A variant is keyed by its source's etag,
// so one of a deleted tenant is never another file's; it only takes room.
func (v *Variants) DropTenant(tenant string) {
	if v.mem != nil && tenant != coffer.DefaultTenantID {
		dropPrefix(v.mem, tenantKey(tenant, ""))
	}
}

// Stats returns the memory tier's hits, misses and evictions.
func (v *Variants) Stats() stats.Stats { return v.stats.Snapshot() }

// Get returns the variant of file (fileID, etag) for the canonical parameters, from
// memory, else from the blob store, else made by produce and stored in both. where says
// which: "memory", "store" or "made". Concurrent misses of one variant make it once.
func (v *Variants) Get(ctx context.Context, fileID, etag, canonical string, produce func(context.Context) ([]byte, error)) (data []byte, where string, err error) {
	key := imaging.VariantKey(fileID, etag, canonical)
	if v.mem == nil {
		return v.load(ctx, key, fileID, produce)
	}
	where = "memory"
	data, err = v.mem.Get(ctx, v.keyPrefix+key, otter.LoaderFunc[string, []byte](func(ctx context.Context, _ string) ([]byte, error) {
		b, w, err := v.load(ctx, key, fileID, produce)
		where = w
		if err == nil && int64(len(b)) > v.cfg.MaxVariant {
			return nil, &tooBig{b}
		}
		return b, err
	}))
	var big *tooBig
	if errors.As(err, &big) {
		return big.b, where, nil
	}
	return data, where, err
}

// tooBig carries a variant past the memory tier without caching it.
type tooBig struct{ b []byte }

func (*tooBig) Error() string { return "variant too large to cache" }

// load reads a persisted variant or makes (and persists) it.
func (v *Variants) load(ctx context.Context, key, fileID string, produce func(context.Context) ([]byte, error)) ([]byte, string, error) {
	if v.cfg.Persist {
		if b, err := v.read(ctx, key); err == nil {
			return b, "store", nil
		} else if coffer.ErrorCode(err) != coffer.ENOTFOUND {
			v.log.Warn("reading a cached variant failed; making it again", "key", key, "err", err)
		}
	}
	b, err := produce(ctx)
	if err != nil {
		return nil, "", err
	}
	if v.cfg.Persist && int64(len(b)) <= v.cfg.MaxVariant && v.room(ctx, fileID) {
		if _, err := v.blobs.Put(context.WithoutCancel(ctx), key, bytes.NewReader(b), int64(len(b))); err != nil {
			v.log.Warn("persisting a variant failed", "key", key, "err", err)
		}
	}
	return b, "made", nil
}

func (v *Variants) read(ctx context.Context, key string) ([]byte, error) {
	r, err := v.blobs.Open(ctx, key)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	size := r.Attrs().Size
	if size > v.cfg.MaxVariant {
		return nil, coffer.Errorf(coffer.ETOOLARGE, "persisted variant is larger than the limit")
	}
	b := make([]byte, size)
	if _, err := io.ReadFull(r, b); err != nil {
		return nil, coffer.Internal(err, "read variant")
	}
	return b, nil
}

// room reports whether file may persist one more variant.
func (v *Variants) room(ctx context.Context, fileID string) bool {
	n := 0
	err := v.blobs.List(ctx, imaging.VariantPrefix+fileID+"/", func(blob.Attrs) error {
		n++
		return nil
	})
	return err == nil && n < v.cfg.MaxPerFile
}

// Forget removes every variant of a file: from memory, and from the blob store
// (failures are logged; the sweeper removes variants of files that are gone).
func (v *Variants) Forget(ctx context.Context, fileID string) {
	prefix := imaging.VariantPrefix + fileID + "/"
	if v.mem != nil {
		mprefix := v.keyPrefix + prefix
		for k := range v.mem.Keys() {
			if strings.HasPrefix(k, mprefix) {
				v.mem.Invalidate(k)
			}
		}
	}
	if !v.cfg.Persist {
		return
	}
	var keys []string
	err := v.blobs.List(ctx, prefix, func(a blob.Attrs) error { keys = append(keys, a.Key); return nil })
	for _, k := range keys {
		if derr := v.blobs.Delete(ctx, k); derr != nil {
			err = derr
		}
	}
	if err != nil {
		v.log.Warn("removing a file's variants failed; the sweeper will", "file", fileID, "err", err)
	}
}
