package blob

import (
	"context"
	"io"
	"strings"
	"sync/atomic"
	"time"

	"github.com/coffer/coffer"
)

// Store is the portable wrapper every upper layer uses: it validates keys before they
// reach the driver, turns driver failures into EINTERNAL, and counts calls and bytes.
//
// A store shared by tenants is used through views (ForTenant): each tenant's keys
// live under its own prefix, and the default tenant's view does not list them.
type Store struct {
	d     Driver
	stats *Stats // shared by every view of one store
	// prefix is put before every key of a tenant's view; hidden is a key prefix the
	// view's List skips (every other tenant's keys, for the default tenant's view).
	prefix, hidden string
	view           bool // a view: Close leaves the driver open
}

// Stats are cumulative counters, read with Snapshot.
type Stats struct {
	Calls, BytesIn, BytesOut atomic.Int64
}

// New wraps d.
func New(d Driver) *Store { return &Store{d: d, stats: &Stats{}} }

// tenantsPrefix is the key prefix under which tenants' blobs live in a shared store.
// The keys the default tenant's service makes ("f/...", "v/...") never begin with it.
const tenantsPrefix = "t/"

// ForTenant returns tenant id's view of s, sharing its driver and counters. A
// tenant's keys are stored under "t/<id>/" and are seen without that prefix (in
// Attrs too); the default tenant's view (coffer.DefaultTenantID) stores keys as
// they are, as a deployment without tenants always has, and its List skips "t/",
// so its orphan sweep never sees another tenant's blobs. id must be a valid tenant
// id (package tenant checks it). A view's Close does nothing, its SweepTemp too
// (temporary files are the driver's, swept through the store itself or the default
// tenant's view), and it offers no Multipart capability.
func (s *Store) ForTenant(id string) *Store {
	if id == coffer.DefaultTenantID {
		return &Store{d: s.d, stats: s.stats, view: true, hidden: tenantsPrefix}
	}
	return s.Under(tenantsPrefix + id + "/")
}

// Under returns the view of s whose keys are stored under prefix (a key prefix
// ending in "/", such as a tenant's own prefix in its own bucket), seen without
// it, as ForTenant describes.
func (s *Store) Under(prefix string) *Store {
	return &Store{d: s.d, stats: s.stats, view: true, prefix: s.prefix + prefix}
}

// out is a's key as the view's caller knows it.
func (s *Store) out(a Attrs) Attrs {
	a.Key = a.Key[len(s.prefix):]
	return a
}

// Driver returns the wrapped driver, for optional-capability type assertions. The
// Store is no DriverWrapper on purpose: As cannot reach past it and skip its key
// checks; it offers the driver's capabilities itself (SweepTemp, Multipart).
func (s *Store) Driver() Driver { return s.d }

// Calls returns how many driver calls were made.
func (s *Store) Calls() int64 { return s.stats.Calls.Load() }

// Put stores r under key; size is the exact length, or -1 if unknown.
func (s *Store) Put(ctx context.Context, key string, r io.Reader, size int64) (Attrs, error) {
	if err := ValidateKey(key); err != nil {
		return Attrs{}, err
	}
	s.stats.Calls.Add(1)
	a, err := s.d.Put(ctx, s.prefix+key, &countingReader{r: r, n: &s.stats.BytesIn}, size)
	if err != nil {
		return Attrs{}, wrap(err, "blob put")
	}
	return s.out(a), nil
}

// Open opens key for reading; ENOTFOUND if missing.
func (s *Store) Open(ctx context.Context, key string) (Reader, error) {
	if err := ValidateKey(key); err != nil {
		return nil, err
	}
	s.stats.Calls.Add(1)
	r, err := s.d.Open(ctx, s.prefix+key)
	if err != nil {
		return nil, wrap(err, "blob open")
	}
	return &countingBlob{Reader: r, n: &s.stats.BytesOut, strip: len(s.prefix)}, nil
}

// Stat returns key's attributes; ENOTFOUND if missing.
func (s *Store) Stat(ctx context.Context, key string) (Attrs, error) {
	if err := ValidateKey(key); err != nil {
		return Attrs{}, err
	}
	s.stats.Calls.Add(1)
	a, err := s.d.Stat(ctx, s.prefix+key)
	if err != nil {
		return Attrs{}, wrap(err, "blob stat")
	}
	return s.out(a), nil
}

// Delete removes key; nil if it did not exist.
func (s *Store) Delete(ctx context.Context, key string) error {
	if err := ValidateKey(key); err != nil {
		return err
	}
	s.stats.Calls.Add(1)
	return wrap(s.d.Delete(ctx, s.prefix+key), "blob delete")
}

// List calls fn for each blob under prefix.
func (s *Store) List(ctx context.Context, prefix string, fn func(Attrs) error) error {
	s.stats.Calls.Add(1)
	if s.prefix == "" && s.hidden == "" {
		return wrap(s.d.List(ctx, prefix, fn), "blob list")
	}
	return wrap(s.d.List(ctx, s.prefix+prefix, func(a Attrs) error {
		if s.hidden != "" && strings.HasPrefix(a.Key, s.hidden) {
			return nil
		}
		return fn(s.out(a))
	}), "blob list")
}

// SweepTemp removes leftover temporary files if the driver has any.
func (s *Store) SweepTemp(ctx context.Context, olderThan time.Time) (int, error) {
	if s.prefix != "" {
		return 0, nil
	}
	sw, ok := As[Sweeper](s.d)
	if !ok {
		return 0, nil
	}
	n, err := sw.SweepTemp(ctx, olderThan)
	return n, wrap(err, "blob sweep")
}

// Close closes the driver (a view's does nothing).
func (s *Store) Close() error {
	if s.view {
		return nil
	}
	return s.d.Close()
}

func wrap(err error, what string) error {
	if err == nil {
		return nil
	}
	if coffer.ErrorCode(err) != coffer.EINTERNAL {
		return err
	}
	return coffer.Internal(err, what)
}

type countingReader struct {
	r io.Reader
	n *atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// countingBlob counts bytes read; the driver's reader and its capabilities (OSFiler
// for sendfile) stay reachable through Unwrap, which As looks through.
type countingBlob struct {
	Reader
	n     *atomic.Int64
	strip int // the tenant view's key prefix, cut from Attrs().Key
}

// Attrs implements Reader, with the key as the view's caller knows it.
func (c *countingBlob) Attrs() Attrs {
	a := c.Reader.Attrs()
	a.Key = a.Key[c.strip:]
	return a
}

func (c *countingBlob) Read(p []byte) (int, error) {
	n, err := c.Reader.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// Unwrap returns the driver's reader (an *os.File-backed one for fsblob, so
// http.ServeContent can use sendfile).
func (c *countingBlob) Unwrap() Reader { return c.Reader }

var (
	_ Driver        = (*Store)(nil)
	_ ReaderWrapper = (*countingBlob)(nil)
)

// BytesIn returns the bytes written to the store; BytesOut those read from it.
func (s *Store) BytesIn() int64  { return s.stats.BytesIn.Load() }
func (s *Store) BytesOut() int64 { return s.stats.BytesOut.Load() }
