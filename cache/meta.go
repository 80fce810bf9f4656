package cache

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/meta"
	"github.com/maypok86/otter/v2"
	"github.com/maypok86/otter/v2/stats"
)

// MetaConfig sizes the metadata cache.
type MetaConfig struct {
	Files   int           // file rows held at most
	Buckets int           // bucket rows held at most
	TTL     time.Duration // safety net: an entry is reloaded at the latest this long after it was loaded
}

// DefaultMetaConfig returns the defaults: 100,000 files (a row is about 500 bytes, so
// ~50 MB at most), 10,000 buckets, 5 minutes.
func DefaultMetaConfig() MetaConfig {
	return MetaConfig{Files: 100_000, Buckets: 10_000, TTL: 5 * time.Minute}
}

// Validate checks c.
func (c MetaConfig) Validate() error {
	if c.Files < 0 || c.Buckets < 0 || c.TTL <= 0 {
		return coffer.Errorf(coffer.EINVALID, "metadata cache: sizes must be >= 0 and the TTL > 0")
	}
	return nil
}

// Meta is a meta.Store that answers GetFile (uploaded files only) and GetBucket from
// memory. Every other method goes to the wrapped store (each written out: a method
// added to meta.Store does not compile here until it is); the writes among them
// invalidate what they change. A load racing with an invalidation of its key is
// discarded (otter guarantees it), and one racing with a Flush is dropped by its
// caller (flushes counts them: otter's InvalidateAll leaves loads in flight alone),
// so a cache never keeps a row older than the newest invalidation.
type Meta struct {
	store   meta.Store // the wrapped store: not embedded, so every method is written out
	flushes atomic.Uint64
	files   *otter.Cache[string, *coffer.File]
	buckets *otter.Cache[string, *coffer.Bucket]
	fstats  *stats.Counter
	bstats  *stats.Counter
	onRules atomic.Pointer[func()]
	// Loaders made once, so a cache hit allocates no closure.
	fileLoader   otter.Loader[string, *coffer.File]
	bucketLoader otter.Loader[string, *coffer.Bucket]
}

var _ meta.Store = (*Meta)(nil)

// NewMeta wraps s.
func NewMeta(s meta.Store, cfg MetaConfig) (*Meta, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	m := &Meta{store: s, fstats: stats.NewCounter(), bstats: stats.NewCounter()}
	m.fileLoader = otter.LoaderFunc[string, *coffer.File](m.loadFile)
	m.bucketLoader = otter.LoaderFunc[string, *coffer.Bucket](m.loadBucket)
	var err error
	m.files, err = otter.New(&otter.Options[string, *coffer.File]{
		MaximumSize:      cfg.Files,
		ExpiryCalculator: otter.ExpiryWriting[string, *coffer.File](cfg.TTL),
		StatsRecorder:    m.fstats,
	})
	if err != nil {
		return nil, err
	}
	m.buckets, err = otter.New(&otter.Options[string, *coffer.Bucket]{
		MaximumSize:      cfg.Buckets,
		ExpiryCalculator: otter.ExpiryWriting[string, *coffer.Bucket](cfg.TTL),
		StatsRecorder:    m.bstats,
	})
	return m, err
}

// Unwrap returns the wrapped store (for optional capabilities such as Migrate).
func (m *Meta) Unwrap() meta.Store { return m.store }

// OnRulesChanged sets fn to run when the rules document changes (through this store or,
// via Invalidate, another node) or the cache is flushed: the service reloads its
// compiled rules then.
func (m *Meta) OnRulesChanged(fn func()) { m.onRules.Store(&fn) }

// FileStats and BucketStats return the hit, miss and eviction counts.
func (m *Meta) FileStats() stats.Stats   { return m.fstats.Snapshot() }
func (m *Meta) BucketStats() stats.Stats { return m.bstats.Snapshot() }

// notUploaded carries a row the cache does not keep (still being uploaded) out of
// the loader.
type notUploaded struct{ f *coffer.File }

func (notUploaded) Error() string { return "file not uploaded" }

// loadFile is the file loader: uploaded rows are cached, others passed through.
func (m *Meta) loadFile(ctx context.Context, id string) (*coffer.File, error) {
	f, err := m.store.GetFile(ctx, id)
	switch {
	case coffer.ErrorCode(err) == coffer.ENOTFOUND:
		return nil, otter.ErrNotFound
	case err != nil:
		return nil, err
	case !f.IsUploaded:
		return nil, notUploaded{f}
	}
	return f, nil
}

// loadBucket is the bucket loader.
func (m *Meta) loadBucket(ctx context.Context, id string) (*coffer.Bucket, error) {
	b, err := m.store.GetBucket(ctx, id)
	if coffer.ErrorCode(err) == coffer.ENOTFOUND {
		return nil, otter.ErrNotFound
	}
	return b, err
}

// GetFile answers uploaded files from the cache; others always come from the store.
func (m *Meta) GetFile(ctx context.Context, id string) (*coffer.File, error) {
	key, ok := meta.FileID(id)
	if !ok {
		return m.store.GetFile(ctx, id)
	}
	flushes := m.flushes.Load()
	f, err := m.files.Get(ctx, key, m.fileLoader)
	if m.flushes.Load() != flushes { // the row may have been loaded before the flush
		m.files.Invalidate(key)
	}
	var nu notUploaded
	switch {
	case errors.As(err, &nu):
		return nu.f, nil
	case errors.Is(err, otter.ErrNotFound):
		return m.store.GetFile(ctx, key) // the store's own ENOTFOUND error
	case err != nil:
		return nil, err
	}
	c := *f // callers may modify what they get
	return &c, nil
}

// GetBucket answers from the cache.
func (m *Meta) GetBucket(ctx context.Context, id string) (*coffer.Bucket, error) {
	flushes := m.flushes.Load()
	b, err := m.buckets.Get(ctx, id, m.bucketLoader)
	if m.flushes.Load() != flushes {
		m.buckets.Invalidate(id)
	}
	if errors.Is(err, otter.ErrNotFound) {
		return m.store.GetBucket(ctx, id) // the store's own ENOTFOUND error
	}
	if err != nil {
		return nil, err
	}
	c := *b
	return &c, nil
}

// Invalidation keys, as sent between nodes: "f:<file id>", "b:<bucket id>", "r" for
// the rules, "*" for everything.
const (
	prefixFile   = "f:"
	prefixBucket = "b:"
	keyRules     = "r"
	keyAll       = "*"
)

// Invalidate drops what key names (see the constants above); an unknown key flushes
// everything, erring on the safe side.
func (m *Meta) Invalidate(key string) {
	switch {
	case len(key) > 2 && key[:2] == prefixFile:
		m.dropFile(key[2:])
	case len(key) > 2 && key[:2] == prefixBucket:
		m.buckets.Invalidate(key[2:])
	case key == keyRules:
		m.rulesChanged()
	default:
		m.Flush()
	}
}

// Flush drops every entry and reloads the rules.
func (m *Meta) Flush() {
	m.flushes.Add(1)
	m.files.InvalidateAll()
	m.buckets.InvalidateAll()
	m.rulesChanged()
}

func (m *Meta) rulesChanged() {
	if fn := m.onRules.Load(); fn != nil {
		(*fn)()
	}
}

// ForgetFile drops file id's cached row, so that the next GetFile reads it from the
// store: for a reader that found the row's blob missing (the file changed since).
func (m *Meta) ForgetFile(id string) { m.dropFile(id) }

// dropFile invalidates a file by id in any spelling.
func (m *Meta) dropFile(id string) {
	if id, ok := meta.FileID(id); ok {
		m.files.Invalidate(id)
	}
}

func (m *Meta) CreateBucket(ctx context.Context, b *coffer.Bucket) error {
	defer m.buckets.Invalidate(b.ID)
	return m.store.CreateBucket(ctx, b)
}

func (m *Meta) UpdateBucket(ctx context.Context, id string, u coffer.BucketUpdate) (*coffer.Bucket, error) {
	defer m.buckets.Invalidate(id)
	return m.store.UpdateBucket(ctx, id, u)
}

func (m *Meta) DeleteBucket(ctx context.Context, id string) error {
	defer m.buckets.Invalidate(id)
	return m.store.DeleteBucket(ctx, id)
}

func (m *Meta) BeginUpload(ctx context.Context, blobKey string, f *coffer.File) error {
	if f != nil {
		defer m.dropFile(f.ID)
	}
	return m.store.BeginUpload(ctx, blobKey, f)
}

func (m *Meta) CommitUpload(ctx context.Context, id, blobKey string, u coffer.FileUpdate) (*coffer.File, *coffer.File, error) {
	defer m.dropFile(id)
	return m.store.CommitUpload(ctx, id, blobKey, u)
}

func (m *Meta) CreateFiles(ctx context.Context, files []*coffer.File) error {
	defer func() {
		for _, f := range files {
			m.dropFile(f.ID)
		}
	}()
	return m.store.CreateFiles(ctx, files)
}

func (m *Meta) UpdateFile(ctx context.Context, id string, u coffer.FileUpdate) (*coffer.File, error) {
	defer m.dropFile(id)
	return m.store.UpdateFile(ctx, id, u)
}

func (m *Meta) DeleteFile(ctx context.Context, id string) (*coffer.File, error) {
	defer m.dropFile(id)
	return m.store.DeleteFile(ctx, id)
}

// GetFileByName always asks the store: the cache is keyed by file id, and a name's
// file changes with every create, replace, rename or delete.
func (m *Meta) GetFileByName(ctx context.Context, bucket, name string) (*coffer.File, error) {
	return m.store.GetFileByName(ctx, bucket, name)
}

// PutFileByName drops the replaced (or created) row by id once the store wrote it.
func (m *Meta) PutFileByName(ctx context.Context, f *coffer.File, p meta.Precondition) (*coffer.File, *coffer.File, error) {
	before, after, err := m.store.PutFileByName(ctx, f, p)
	if after != nil {
		m.dropFile(after.ID)
	}
	return before, after, err
}
