package cache

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/bus"
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
//
// One Meta serves every tenant: ForTenant returns a tenant's view, which shares the
// caches, their bounds and counters, and keys its entries apart by the tenant (see
// tenantKey), so that a view never answers another tenant's row even for the same id.
//
// A tenant id can be deleted and taken again by another customer; the view of each
// incarnation (ForIncarnation) tags what it loads with it and takes nothing another
// incarnation loaded, so that an entry left by a deleted tenant is never answered to
// the next one of its id, even if the invalidation that should have dropped it was
// lost. DropTenant (the cluster event bus.TenantGone) drops a tenant's entries.
type Meta struct {
	*metaCaches
	store meta.Store // the wrapped store: not embedded, so every method is written out
	// tenant is this view's tenant (coffer.DefaultTenantID for NewMeta's); keyPrefix
	// is tenantKey(tenant, ""), put before every key of this view's entries; inc is
	// the tenant's incarnation ("" for the default tenant), with which this view tags
	// its entries.
	tenant, keyPrefix, inc string
	// Loaders made once per view, so a cache hit allocates no closure.
	fileLoader   otter.Loader[string, tagged[*coffer.File]]
	bucketLoader otter.Loader[string, tagged[*coffer.Bucket]]
}

// tagged is a cached row with the incarnation of the tenant whose view loaded it.
type tagged[V any] struct {
	v   V
	inc string
}

// metaCaches is what every tenant's view of one Meta shares.
type metaCaches struct {
	flushes atomic.Uint64
	files   *otter.Cache[string, tagged[*coffer.File]]
	buckets *otter.Cache[string, tagged[*coffer.Bucket]]
	fstats  *stats.Counter
	bstats  *stats.Counter
	// onRules holds each tenant's rules-changed function (OnRulesChanged).
	rulesMu sync.Mutex
	onRules map[string]func()
	// onTenant runs when a tenant's registry row changes (bus.TenantChanged).
	onTenant atomic.Pointer[func(tenant string)]
	// onGone runs when a tenant was deleted (bus.TenantGone, DropTenant).
	onGone atomic.Pointer[func(tenant string)]
	// onSites runs when a tenant's sites change (bus.SitesChanged), onPurge for a
	// site purge sent by another node (bus.SitePurged), onWritten after this node wrote
	// file rows (OnFileWritten).
	onSites   atomic.Pointer[func(tenant string)]
	onPurge   atomic.Pointer[func(tenant, site string, p bus.Purge)]
	onWritten atomic.Pointer[func(tenant string, files []*coffer.File)]
}

var _ meta.Store = (*Meta)(nil)

// tenantKey is the cache key of id (a file or bucket id, or "" for the prefix alone)
// in tenant's entries: the id itself for the default tenant, so that a deployment
// without tenants keys as before, and "<tenant>/<id>" for others. Neither tenant ids
// nor file and bucket ids contain "/", so keys of two tenants never meet. The
// cluster bus's events name entries by the same two parts (bus.FileChanged).
func tenantKey(tenant, id string) string {
	if tenant == coffer.DefaultTenantID {
		return id
	}
	return tenant + "/" + id
}

// NewMeta wraps s, as the default tenant's view.
func NewMeta(s meta.Store, cfg MetaConfig) (*Meta, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	c := &metaCaches{fstats: stats.NewCounter(), bstats: stats.NewCounter(), onRules: map[string]func(){}}
	var err error
	c.files, err = otter.New(&otter.Options[string, tagged[*coffer.File]]{
		MaximumSize:      cfg.Files,
		ExpiryCalculator: otter.ExpiryWriting[string, tagged[*coffer.File]](cfg.TTL),
		StatsRecorder:    c.fstats,
	})
	if err != nil {
		return nil, err
	}
	c.buckets, err = otter.New(&otter.Options[string, tagged[*coffer.Bucket]]{
		MaximumSize:      cfg.Buckets,
		ExpiryCalculator: otter.ExpiryWriting[string, tagged[*coffer.Bucket]](cfg.TTL),
		StatsRecorder:    c.bstats,
	})
	if err != nil {
		return nil, err
	}
	return c.view(coffer.DefaultTenantID, "", s), nil
}

// ForTenant returns tenant's view of the cache over s, that tenant's view of the
// store m wraps (meta.Tenanted). It shares m's caches; see Meta.
func (m *Meta) ForTenant(tenant string, s meta.Store) *Meta { return m.view(tenant, "", s) }

// ForIncarnation is ForTenant for one incarnation of tenant (any string that differs
// between the tenants that have held its id, such as its creation time): the view
// answers no entry that a view of another incarnation loaded.
func (m *Meta) ForIncarnation(tenant, inc string, s meta.Store) *Meta { return m.view(tenant, inc, s) }

// view builds tenant's view over s.
func (c *metaCaches) view(tenant, inc string, s meta.Store) *Meta {
	m := &Meta{metaCaches: c, store: s, tenant: tenant, keyPrefix: tenantKey(tenant, ""), inc: inc}
	m.fileLoader = otter.LoaderFunc[string, tagged[*coffer.File]](m.loadFile)
	m.bucketLoader = otter.LoaderFunc[string, tagged[*coffer.Bucket]](m.loadBucket)
	return m
}

// Unwrap returns the wrapped store (for optional capabilities such as Migrate).
func (m *Meta) Unwrap() meta.Store { return m.store }

// OnRulesChanged sets fn to run when this view's tenant's rules document changes
// (through this store or, via Handle, another node) or the cache is flushed: the
// tenant's service reloads its compiled rules then.
func (m *Meta) OnRulesChanged(fn func()) {
	m.rulesMu.Lock()
	defer m.rulesMu.Unlock()
	m.onRules[m.tenant] = fn
}

// OnTenantChanged sets fn to run when a tenant's row in the tenant registry changes
// on another node (the event bus.TenantChanged), so this node reads it again.
func (m *Meta) OnTenantChanged(fn func(tenant string)) { m.onTenant.Store(&fn) }

// OnTenantGone sets fn to run, after the tenant's entries here are dropped, when a
// tenant was deleted (DropTenant, or the event bus.TenantGone from any node), so
// that the caches beside this one drop theirs too.
func (m *Meta) OnTenantGone(fn func(tenant string)) { m.onGone.Store(&fn) }

// OnSitesChanged sets fn to run when a tenant's sites change on another node (the
// event bus.SitesChanged); without it such an event flushes everything.
func (m *Meta) OnSitesChanged(fn func(tenant string)) { m.onSites.Store(&fn) }

// OnPurge sets fn to run for a purge of tenant's site another node sent (the event
// bus.SitePurged); without it such an event is ignored (no cached row is involved).
func (m *Meta) OnPurge(fn func(tenant, site string, p bus.Purge)) { m.onPurge.Store(&fn) }

// OnFileWritten sets fn to run after any view of m wrote file rows on this node:
// with the view's tenant and the rows written (before and after a replace, a rename
// or a metadata change, the row deleted), so that sites serving a bucket can purge
// the paths of the names that changed. It is not called for failed writes.
func (m *Meta) OnFileWritten(fn func(tenant string, files []*coffer.File)) { m.onWritten.Store(&fn) }

// written runs the OnFileWritten function with this view's tenant and the non-nil
// rows of files.
func (m *Meta) written(err error, files ...*coffer.File) {
	fn := m.onWritten.Load()
	if fn == nil || err != nil {
		return
	}
	rows := make([]*coffer.File, 0, len(files))
	for _, f := range files {
		if f != nil {
			rows = append(rows, f)
		}
	}
	if len(rows) > 0 {
		(*fn)(m.tenant, rows)
	}
}

// FileStats and BucketStats return the hit, miss and eviction counts.
func (m *Meta) FileStats() stats.Stats   { return m.fstats.Snapshot() }
func (m *Meta) BucketStats() stats.Stats { return m.bstats.Snapshot() }

// notUploaded carries a row the cache does not keep (still being uploaded) out of
// the loader.
type notUploaded struct{ f *coffer.File }

func (notUploaded) Error() string { return "file not uploaded" }

// loadFile is the file loader: uploaded rows are cached, others passed through.
func (m *Meta) loadFile(ctx context.Context, key string) (tagged[*coffer.File], error) {
	f, err := m.store.GetFile(ctx, key[len(m.keyPrefix):])
	switch {
	case coffer.ErrorCode(err) == coffer.ENOTFOUND:
		return tagged[*coffer.File]{}, otter.ErrNotFound
	case err != nil:
		return tagged[*coffer.File]{}, err
	case !f.IsUploaded:
		return tagged[*coffer.File]{}, notUploaded{f}
	}
	return tagged[*coffer.File]{f, m.inc}, nil
}

// loadBucket is the bucket loader.
func (m *Meta) loadBucket(ctx context.Context, key string) (tagged[*coffer.Bucket], error) {
	b, err := m.store.GetBucket(ctx, key[len(m.keyPrefix):])
	if coffer.ErrorCode(err) == coffer.ENOTFOUND {
		return tagged[*coffer.Bucket]{}, otter.ErrNotFound
	}
	return tagged[*coffer.Bucket]{b, m.inc}, err
}

// errOtherIncarnation is get's answer when another incarnation of the view's tenant
// loaded the entry again as soon as it was dropped: the caller reads the store.
var errOtherIncarnation = errors.New("cached by another incarnation of the tenant")

// get returns key's entry in c as loaded by this view's incarnation: an entry another
// incarnation loaded is dropped and loaded again (errOtherIncarnation if it comes back
// from another one again), and one loaded before a Flush is dropped after use.
func get[V any](ctx context.Context, m *Meta, c *otter.Cache[string, tagged[V]], key string, l otter.Loader[string, tagged[V]]) (V, error) {
	for range 2 {
		flushes := m.flushes.Load()
		e, err := c.Get(ctx, key, l)
		if m.flushes.Load() != flushes { // the row may have been loaded before the flush
			c.Invalidate(key)
		}
		if err != nil || e.inc == m.inc {
			return e.v, err
		}
		c.Invalidate(key)
	}
	var none V
	return none, errOtherIncarnation
}

// GetFile answers uploaded files from the cache; others always come from the store.
func (m *Meta) GetFile(ctx context.Context, id string) (*coffer.File, error) {
	id, ok := meta.FileID(id)
	if !ok {
		return m.store.GetFile(ctx, id)
	}
	f, err := get(ctx, m, m.files, m.fileKey(id), m.fileLoader)
	var nu notUploaded
	switch {
	case errors.As(err, &nu):
		return nu.f, nil
	case errors.Is(err, otter.ErrNotFound) || err == errOtherIncarnation:
		return m.store.GetFile(ctx, id) // the store's own ENOTFOUND error
	case err != nil:
		return nil, err
	}
	c := *f // callers may modify what they get
	return &c, nil
}

// GetBucket answers from the cache.
func (m *Meta) GetBucket(ctx context.Context, id string) (*coffer.Bucket, error) {
	b, err := get(ctx, m, m.buckets, m.bucketKey(id), m.bucketLoader)
	if errors.Is(err, otter.ErrNotFound) || err == errOtherIncarnation {
		return m.store.GetBucket(ctx, id) // the store's own ENOTFOUND error
	}
	if err != nil {
		return nil, err
	}
	c := *b
	return &c, nil
}

// fileKey and bucketKey are the cache keys of this view's file (canonical id) and
// bucket.
func (m *Meta) fileKey(id string) string   { return m.keyPrefix + id }
func (m *Meta) bucketKey(id string) string { return m.keyPrefix + id }

// Handle applies an event another node (or the store's triggers) sent, whichever
// view it is called on: FileChanged, BucketChanged and RulesChanged drop or reload
// what they name, TenantGone drops the tenant (DropTenant), TenantChanged,
// SitesChanged and SitePurged go to their functions (OnTenantChanged...; the first
// two flush everything without one), and Everything, or a kind this version does
// not know, flushes everything, erring on the safe side.
func (m *Meta) Handle(e bus.Event) {
	switch e.Kind {
	case bus.FileChanged:
		if id, ok := meta.FileID(e.ID); ok {
			m.files.Invalidate(tenantKey(e.Tenant, id))
		}
	case bus.BucketChanged:
		m.buckets.Invalidate(tenantKey(e.Tenant, e.ID))
	case bus.RulesChanged:
		m.rulesChanged(e.Tenant)
	case bus.TenantGone:
		m.DropTenant(e.Tenant)
	case bus.TenantChanged:
		m.tellOrFlush(m.onTenant.Load(), e.Tenant)
	case bus.SitesChanged:
		m.tellOrFlush(m.onSites.Load(), e.Tenant)
	case bus.SitePurged:
		if fn := m.onPurge.Load(); fn != nil {
			(*fn)(e.Tenant, e.ID, e.Purge)
		}
	default:
		m.Flush()
	}
}

// tellOrFlush runs fn with tenant, or flushes everything without fn.
func (m *Meta) tellOrFlush(fn *func(tenant string), tenant string) {
	if fn == nil {
		m.Flush()
		return
	}
	(*fn)(tenant)
}

// Flush drops every entry of every tenant and reloads every tenant's rules.
func (m *Meta) Flush() {
	m.flushes.Add(1)
	m.files.InvalidateAll()
	m.buckets.InvalidateAll()
	m.rulesMu.Lock()
	fns := make([]func(), 0, len(m.onRules))
	for _, fn := range m.onRules {
		fns = append(fns, fn)
	}
	m.rulesMu.Unlock()
	for _, fn := range fns {
		fn()
	}
}

// DropTenant drops every entry of tenant, which was deleted, and runs the
// OnTenantGone function; the default tenant's are kept (it cannot be deleted).
func (m *Meta) DropTenant(tenant string) {
	if tenant == coffer.DefaultTenantID {
		return
	}
	dropPrefix(m.files, tenantKey(tenant, ""))
	dropPrefix(m.buckets, tenantKey(tenant, ""))
	if fn := m.onGone.Load(); fn != nil {
		(*fn)(tenant)
	}
}

// dropPrefix invalidates every key of c that starts with prefix.
func dropPrefix[V any](c *otter.Cache[string, V], prefix string) {
	for k := range c.Keys() {
		if strings.HasPrefix(k, prefix) {
			c.Invalidate(k)
		}
	}
}

// rulesChanged runs tenant's rules-changed function, if it has one.
func (m *Meta) rulesChanged(tenant string) {
	m.rulesMu.Lock()
	fn := m.onRules[tenant]
	m.rulesMu.Unlock()
	if fn != nil {
		fn()
	}
}

// ForgetFile drops file id's cached row, so that the next GetFile reads it from the
// store: for a reader that found the row's blob missing (the file changed since).
func (m *Meta) ForgetFile(id string) { m.dropFile(id) }

// dropFile invalidates one of this view's files by id in any spelling.
func (m *Meta) dropFile(id string) {
	if id, ok := meta.FileID(id); ok {
		m.files.Invalidate(m.fileKey(id))
	}
}

// dropBucket invalidates one of this view's buckets.
func (m *Meta) dropBucket(id string) { m.buckets.Invalidate(m.bucketKey(id)) }

func (m *Meta) CreateBucket(ctx context.Context, b *coffer.Bucket) error {
	defer m.dropBucket(b.ID)
	return m.store.CreateBucket(ctx, b)
}

func (m *Meta) UpdateBucket(ctx context.Context, id string, u coffer.BucketUpdate) (*coffer.Bucket, error) {
	defer m.dropBucket(id)
	return m.store.UpdateBucket(ctx, id, u)
}

func (m *Meta) DeleteBucket(ctx context.Context, id string) error {
	defer m.dropBucket(id)
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
	before, after, err := m.store.CommitUpload(ctx, id, blobKey, u)
	m.written(err, before, after)
	return before, after, err
}

func (m *Meta) CreateFiles(ctx context.Context, files []*coffer.File) error {
	defer func() {
		for _, f := range files {
			m.dropFile(f.ID)
		}
	}()
	err := m.store.CreateFiles(ctx, files)
	m.written(err, files...)
	return err
}

// UpdateFile reports the row before the change too (read from the cache or the
// store first, only when someone listens: OnFileWritten), so that a rename purges
// the old name's path.
func (m *Meta) UpdateFile(ctx context.Context, id string, u coffer.FileUpdate) (*coffer.File, error) {
	defer m.dropFile(id)
	var before *coffer.File
	if m.onWritten.Load() != nil {
		before, _ = m.GetFile(ctx, id)
	}
	after, err := m.store.UpdateFile(ctx, id, u)
	m.written(err, before, after)
	return after, err
}

func (m *Meta) DeleteFile(ctx context.Context, id string) (*coffer.File, error) {
	defer m.dropFile(id)
	f, err := m.store.DeleteFile(ctx, id)
	m.written(err, f)
	return f, err
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
	m.written(err, before, after)
	return before, after, err
}
