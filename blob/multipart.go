package blob

import (
	"context"
	"io"
	"time"
)

// Multipart limits, S3's: callers that want to run on every driver keep to them.
const (
	MaxParts    = 10000   // part numbers are 1..MaxParts
	MinPartSize = 5 << 20 // every part but the last is at least this long
)

// Part describes a stored part of a multipart upload.
type Part struct {
	Number int
	Size   int64
	// ETag is opaque and changes whenever the part's content does (S3: its MD5 in hex).
	ETag string
}

// Upload describes a multipart upload in progress.
type Upload struct {
	Key, ID string
	Created time.Time
}

// Multipart is the optional capability of drivers that build a blob from parts stored
// one at a time, over several requests and across restarts. It is what resumable and
// parallel uploads are built on:
//   - the S3 face maps CreateMultipartUpload, UploadPart, ListParts,
//     CompleteMultipartUpload, AbortMultipartUpload and ListMultipartUploads one to
//     one;
//   - the tus face creates an upload per tus upload and stores each PATCH body as the
//     next part; a tail shorter than MinPartSize is held back (as an ordinary blob
//     under a scratch key) and sent in front of the next PATCH, so that a driver with
//     S3's limits accepts it; the upload offset is the sum of Parts' sizes (plus the
//     tail); the last PATCH completes the upload.
//
// Contract (checked by blobtest.Run for drivers that have it; keys are checked by the
// Store, as for Put):
//   - CreateUpload starts an upload that Complete will store under key and returns its
//     id: opaque, non-empty printable ASCII, at most 1024 bytes. Nothing is visible
//     under key until Complete.
//   - PutPart stores part n (1..MaxParts, else EINVALID) of upload id from r, replacing
//     an earlier part n. size is honoured as by Put (exact, or -1 if unknown) and a
//     failed PutPart (wrong size, reader error, ctx done) leaves the earlier part n, if
//     any, as it was. A driver may refuse (EINVALID) to Complete with a part other than
//     the last shorter than MinPartSize.
//   - Parts lists the upload's stored parts, by number ascending.
//   - Complete stores the given parts, in the order given, under key, as one Put would
//     (atomically and durably), and ends the upload. The parts must have ascending
//     numbers and the ETags Parts reports, else EINVALID and the upload is unchanged.
//   - Abort ends the upload and discards its parts; nil if there is no such upload.
//   - Uploads calls fn for every upload in progress, in any order, so abandoned ones
//     can be found and aborted.
//   - An upload and its parts are as durable as blobs: they survive closing and
//     reopening the driver. An id is only valid with the key it was created for.
//   - PutPart, Parts and Complete return ENOTFOUND for an upload that does not exist
//     (never created, completed, aborted, or created for another key), except that
//     Complete repeated on a completed upload may succeed again, without changing
//     the blob (S3 makes it idempotent, so that a client can retry it).
type Multipart interface {
	CreateUpload(ctx context.Context, key string) (id string, err error)
	PutPart(ctx context.Context, key, id string, n int, r io.Reader, size int64) (Part, error)
	Parts(ctx context.Context, key, id string) ([]Part, error)
	Complete(ctx context.Context, key, id string, parts []Part) (Attrs, error)
	Abort(ctx context.Context, key, id string) error
	Uploads(ctx context.Context, fn func(Upload) error) error
}

// Multipart returns the driver's Multipart capability, behind the Store's key checks,
// error wrapping and counters; false if the driver has none.
func (s *Store) Multipart() (Multipart, bool) {
	if s.prefix != "" {
		return nil, false // see ForTenant
	}
	m, ok := As[Multipart](s.d)
	if !ok {
		return nil, false
	}
	return storeMultipart{s: s, m: m}, true
}

// storeMultipart is a Store's view of its driver's Multipart capability.
type storeMultipart struct {
	s *Store
	m Multipart
}

// CreateUpload implements Multipart.
func (sm storeMultipart) CreateUpload(ctx context.Context, key string) (string, error) {
	if err := ValidateKey(key); err != nil {
		return "", err
	}
	sm.s.stats.Calls.Add(1)
	id, err := sm.m.CreateUpload(ctx, key)
	return id, wrap(err, "blob create upload")
}

// PutPart implements Multipart.
func (sm storeMultipart) PutPart(ctx context.Context, key, id string, n int, r io.Reader, size int64) (Part, error) {
	if err := ValidateKey(key); err != nil {
		return Part{}, err
	}
	sm.s.stats.Calls.Add(1)
	p, err := sm.m.PutPart(ctx, key, id, n, &countingReader{r: r, n: &sm.s.stats.BytesIn}, size)
	return p, wrap(err, "blob put part")
}

// Parts implements Multipart.
func (sm storeMultipart) Parts(ctx context.Context, key, id string) ([]Part, error) {
	if err := ValidateKey(key); err != nil {
		return nil, err
	}
	sm.s.stats.Calls.Add(1)
	ps, err := sm.m.Parts(ctx, key, id)
	return ps, wrap(err, "blob list parts")
}

// Complete implements Multipart.
func (sm storeMultipart) Complete(ctx context.Context, key, id string, parts []Part) (Attrs, error) {
	if err := ValidateKey(key); err != nil {
		return Attrs{}, err
	}
	sm.s.stats.Calls.Add(1)
	a, err := sm.m.Complete(ctx, key, id, parts)
	return a, wrap(err, "blob complete upload")
}

// Abort implements Multipart.
func (sm storeMultipart) Abort(ctx context.Context, key, id string) error {
	if err := ValidateKey(key); err != nil {
		return err
	}
	sm.s.stats.Calls.Add(1)
	return wrap(sm.m.Abort(ctx, key, id), "blob abort upload")
}

// Uploads implements Multipart.
func (sm storeMultipart) Uploads(ctx context.Context, fn func(Upload) error) error {
	sm.s.stats.Calls.Add(1)
	return wrap(sm.m.Uploads(ctx, fn), "blob list uploads")
}
