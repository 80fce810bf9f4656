package blob

import (
	"context"
	"io"
	"sync/atomic"
	"time"

	"github.com/coffer/coffer"
)

// Store is the portable wrapper every upper layer uses: it validates keys before they
// reach the driver, turns driver failures into EINTERNAL, and counts calls and bytes.
type Store struct {
	d     Driver
	stats Stats
}

// Stats are cumulative counters, read with Snapshot.
type Stats struct {
	Calls, BytesIn, BytesOut atomic.Int64
}

// New wraps d.
func New(d Driver) *Store { return &Store{d: d} }

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
	a, err := s.d.Put(ctx, key, &countingReader{r: r, n: &s.stats.BytesIn}, size)
	return a, wrap(err, "blob put")
}

// Open opens key for reading; ENOTFOUND if missing.
func (s *Store) Open(ctx context.Context, key string) (Reader, error) {
	if err := ValidateKey(key); err != nil {
		return nil, err
	}
	s.stats.Calls.Add(1)
	r, err := s.d.Open(ctx, key)
	if err != nil {
		return nil, wrap(err, "blob open")
	}
	return &countingBlob{Reader: r, n: &s.stats.BytesOut}, nil
}

// Stat returns key's attributes; ENOTFOUND if missing.
func (s *Store) Stat(ctx context.Context, key string) (Attrs, error) {
	if err := ValidateKey(key); err != nil {
		return Attrs{}, err
	}
	s.stats.Calls.Add(1)
	a, err := s.d.Stat(ctx, key)
	return a, wrap(err, "blob stat")
}

// Delete removes key; nil if it did not exist.
func (s *Store) Delete(ctx context.Context, key string) error {
	if err := ValidateKey(key); err != nil {
		return err
	}
	s.stats.Calls.Add(1)
	return wrap(s.d.Delete(ctx, key), "blob delete")
}

// List calls fn for each blob under prefix.
func (s *Store) List(ctx context.Context, prefix string, fn func(Attrs) error) error {
	s.stats.Calls.Add(1)
	return wrap(s.d.List(ctx, prefix, fn), "blob list")
}

// SweepTemp removes leftover temporary files if the driver has any.
func (s *Store) SweepTemp(ctx context.Context, olderThan time.Time) (int, error) {
	sw, ok := As[Sweeper](s.d)
	if !ok {
		return 0, nil
	}
	n, err := sw.SweepTemp(ctx, olderThan)
	return n, wrap(err, "blob sweep")
}

// Close closes the driver.
func (s *Store) Close() error { return s.d.Close() }

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
	n *atomic.Int64
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
