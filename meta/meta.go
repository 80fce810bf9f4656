// Package meta defines the metadata store: buckets, files and upload intents.
//
// Contract every Store honours (checked by meta/metatest):
//   - Errors are *coffer.Error with the codes named on each method; anything else is a
//     backend failure and is returned wrapped as EINTERNAL.
//   - Timestamps are UTC, truncated to microseconds (PostgreSQL's precision).
//   - Metadata JSON round-trips as sent, compacted: keys in their order, numbers as
//     written ("{}" when empty); see coffer.ValidateMetadata.
//   - An upload intent records a blob key that is being written. Blobs referenced
//     neither by a file row nor by an intent are orphans and may be deleted at any time.
//   - Name-addressed files: a file written by PutFileByName is "named", and at most one
//     named file exists per (bucket, name) (a unique key in both SQL stores). Files
//     created any other way — every hasura /v1 upload, and every row that existed before
//     the key was introduced — are not named and are not constrained: several of them
//     may share a name, as hasura-storage allows, and GetFileByName does not see them.
//     A named file is only inserted when its bytes are uploaded, so an upload in
//     progress never holds the name; the previous version stays readable until the
//     replace commits. Renaming a named file (UpdateFile) onto a taken name is
//     ECONFLICT.
//   - Tenants (tenants.go): a store shared by tenants (Tenanted) answers for one
//     tenant at a time; its own methods are the default tenant's, the rows of a
//     deployment without tenants. Another tenant's rows answer as missing ones.
package meta

import (
	"context"
	"time"

	"github.com/coffer/coffer"
)

// Store is the metadata store.
type Store interface {
	// CreateBucket inserts b, setting CreatedAt/UpdatedAt. ECONFLICT if the id exists.
	CreateBucket(ctx context.Context, b *coffer.Bucket) error
	// GetBucket returns ENOTFOUND if there is no such bucket.
	GetBucket(ctx context.Context, id string) (*coffer.Bucket, error)
	// ListBuckets returns all buckets ordered by id.
	ListBuckets(ctx context.Context) ([]*coffer.Bucket, error)
	// UpdateBucket applies u and bumps UpdatedAt. ENOTFOUND if missing.
	UpdateBucket(ctx context.Context, id string, u coffer.BucketUpdate) (*coffer.Bucket, error)
	// DeleteBucket removes an empty bucket. ENOTFOUND if missing, EINUSE if it still
	// holds files (uploaded or not).
	DeleteBucket(ctx context.Context, id string) error

	// BeginUpload records the intent to write blobKey. When f is non-nil it also inserts
	// f (IsUploaded false) in the same transaction, setting CreatedAt/UpdatedAt:
	// ECONFLICT if f.ID exists, ENOTFOUND if f.BucketID does not exist.
	BeginUpload(ctx context.Context, blobKey string, f *coffer.File) error
	// CommitUpload applies u to file id, bumps UpdatedAt and removes the intent for
	// blobKey, in one transaction, and returns the row as it was before and after.
	// ENOTFOUND if the file is gone; EABORTED if u.IfBlobKey is set and differs, or if
	// there is no intent for blobKey (the upload was swept as abandoned).
	CommitUpload(ctx context.Context, id, blobKey string, u coffer.FileUpdate) (before, after *coffer.File, err error)
	// CreateFiles inserts already-uploaded files (IsUploaded true, BlobKey set) and
	// removes the intent for each file's BlobKey, all in one transaction: every file
	// becomes visible or none does. Sets CreatedAt/UpdatedAt. ECONFLICT if an id exists
	// (or appears twice), ENOTFOUND if a bucket does not exist, EABORTED if an intent
	// for a BlobKey is missing (the upload was swept as abandoned).
	CreateFiles(ctx context.Context, files []*coffer.File) error
	// AbortUpload removes the intent for blobKey and, if a not-yet-uploaded file row
	// points at blobKey, that row too. No error if neither exists.
	AbortUpload(ctx context.Context, blobKey string) error
	// StaleIntents returns intents created before olderThan.
	StaleIntents(ctx context.Context, olderThan time.Time) ([]Intent, error)
	// BlobReferenced reports whether blobKey is referenced by a file row or an intent.
	BlobReferenced(ctx context.Context, blobKey string) (bool, error)

	// GetFile returns ENOTFOUND if there is no such file (uploaded or not).
	GetFile(ctx context.Context, id string) (*coffer.File, error)
	// UpdateFile applies u, bumps UpdatedAt, returns the new row. ENOTFOUND if missing;
	// EABORTED if u.IfBlobKey is set and differs.
	UpdateFile(ctx context.Context, id string, u coffer.FileUpdate) (*coffer.File, error)
	// DeleteFile removes the row and returns it. ENOTFOUND if missing.
	DeleteFile(ctx context.Context, id string) (*coffer.File, error)
	// ListFiles returns uploaded files of opt.BucketID whose name starts with opt.Prefix,
	// ordered by (name, id), at most opt.Limit, from opt.Cursor on. With
	// opt.Delimiter "/", files under a common prefix one level below opt.Prefix are
	// listed as that prefix (Page.Prefixes), once, where its first file would be; the
	// limit counts both, Next resumes after either, and opt.Filter decides which files
	// (hence which prefixes) there are. It must not read every name under a prefix
	// (seek past it). EINVALID for a bad cursor or a delimiter other than "" and "/".
	// An empty result for a bucket that does not exist (the caller checks).
	ListFiles(ctx context.Context, opt coffer.ListOptions) (coffer.Page, error)
	// ListNotUploaded returns files with IsUploaded false, oldest first, at most limit.
	ListNotUploaded(ctx context.Context, limit int) ([]*coffer.File, error)
	// GetFileByName returns the named file name in bucket (see the package doc);
	// ENOTFOUND if there is none, including when only files that are not named carry
	// that name.
	GetFileByName(ctx context.Context, bucket, name string) (*coffer.File, error)
	// PutFileByName creates or replaces the named file (f.BucketID, f.Name) with the
	// already-uploaded bytes at f.BlobKey and removes the intent for f.BlobKey, in one
	// transaction, if p holds for the named file there (EPRECONDITION if not). It
	// returns the row before (nil when created) and after, and stores after in *f. A
	// create inserts f (IsUploaded true) with f.ID: EINVALID if it is not a UUID,
	// ECONFLICT if it exists, ENOTFOUND if the bucket does not. A replace keeps the
	// row's id, CreatedAt and UploadedByUserID, sets the content columns from f and
	// bumps UpdatedAt; the old blob key is then unreferenced. EABORTED if the intent
	// for f.BlobKey is missing (the upload was swept as abandoned). Emits
	// file.created or the events of a replace, as CreateFiles and CommitUpload do.
	PutFileByName(ctx context.Context, f *coffer.File, p Precondition) (before, after *coffer.File, err error)
	// EachFile calls fn for every file row (any state), in id order, stopping at the
	// first error fn returns.
	EachFile(ctx context.Context, fn func(*coffer.File) error) error

	// GetRules returns the stored permission rules document; ENOTFOUND if none.
	GetRules(ctx context.Context) ([]byte, error)
	// PutRules stores the rules document (already validated), replacing the old one.
	PutRules(ctx context.Context, doc []byte) error

	// Ping checks the connection.
	Ping(ctx context.Context) error
	Close() error
}

// Intent is an upload in progress (or abandoned by a crash).
type Intent struct {
	BlobKey   string
	FileID    string
	CreatedAt time.Time
}
