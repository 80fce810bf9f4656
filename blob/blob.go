// Package blob defines the blob store driver contract and a thin portable wrapper.
//
// Contract every Driver honours (checked by blob/blobtest):
//   - Keys are validated by the wrapper before they reach a driver: 1..512 bytes of
//     [A-Za-z0-9._/-], no leading '/', no empty, "." or ".." segments.
//   - Put stores r under key atomically: readers see the old blob or the new one, never a
//     part. When size >= 0, Put fails (and stores nothing) unless r yields exactly size
//     bytes. When Put returns nil the blob is durable (fsync'd / acknowledged by S3).
//     If r returns an error or ctx is cancelled, nothing is stored.
//   - Open returns a reader positioned at 0 that can seek; ENOTFOUND if missing.
//   - Delete is idempotent: nil when the key does not exist.
//   - List calls fn for every blob whose key starts with prefix, in any order.
//   - Errors: *coffer.Error with ENOTFOUND where named; others are backend failures.
//   - What Put stores outlives the driver: a driver closed and opened again over the
//     same storage (directory, bucket) finds it (blobtest.RunReopen).
//
// Beyond the contract, drivers and their readers may have optional capabilities, each
// a small named interface with its own contract (capability.go: OSFiler, FileSender,
// Sweeper; multipart.go: Multipart). Find them with As, which looks through wrappers;
// the Store offers its driver's own, behind its key checks (Store.SweepTemp,
// Store.Multipart). A new backend is done when blobtest.Run (and, if it keeps data,
// blobtest.RunReopen) passes, capabilities included.
package blob

import (
	"context"
	"io"
	"time"
)

// Attrs describes a stored blob.
type Attrs struct {
	Key     string
	Size    int64
	ModTime time.Time
}

// Reader is an open blob. Size is known without reading.
type Reader interface {
	io.ReadSeekCloser
	Attrs() Attrs
}

// Driver is implemented by every blob backend (fsblob, s3blob, memblob).
type Driver interface {
	Put(ctx context.Context, key string, r io.Reader, size int64) (Attrs, error)
	Open(ctx context.Context, key string) (Reader, error)
	Stat(ctx context.Context, key string) (Attrs, error)
	Delete(ctx context.Context, key string) error
	List(ctx context.Context, prefix string, fn func(Attrs) error) error
	Close() error
}

// Sweeper is optionally implemented by drivers that leave temporary files behind after
// a crash (fsblob). SweepTemp removes those older than olderThan and returns how many.
type Sweeper interface {
	SweepTemp(ctx context.Context, olderThan time.Time) (int, error)
}

// ContextReader returns a reader that fails with ctx's error once ctx is done, for
// drivers whose copy loop does not watch ctx itself.
func ContextReader(ctx context.Context, r io.Reader) io.Reader { return ctxReader{ctx, r} }

type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
