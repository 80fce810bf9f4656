package meta

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/coffer/coffer"
)

// Counting wraps a Store and counts the calls that reach it, per method: every call
// is one or more database round trips. Metrics read the counts, and tests use them to
// prove that a cache answered without touching the database.
type Counting struct {
	s     Store
	calls [numMethods]atomic.Int64
}

var _ Store = (*Counting)(nil)

// Method names, in the order Counts reports them.
var MethodNames = [...]string{
	"CreateBucket", "GetBucket", "ListBuckets", "UpdateBucket", "DeleteBucket",
	"BeginUpload", "CommitUpload", "CreateFiles", "AbortUpload", "StaleIntents", "BlobReferenced",
	"GetFile", "UpdateFile", "DeleteFile", "ListFiles", "ListNotUploaded", "EachFile",
	"GetFileByName", "PutFileByName",
	"GetRules", "PutRules", "Ping",
}

const (
	mCreateBucket = iota
	mGetBucket
	mListBuckets
	mUpdateBucket
	mDeleteBucket
	mBeginUpload
	mCommitUpload
	mCreateFiles
	mAbortUpload
	mStaleIntents
	mBlobReferenced
	mGetFile
	mUpdateFile
	mDeleteFile
	mListFiles
	mListNotUploaded
	mEachFile
	mGetFileByName
	mPutFileByName
	mGetRules
	mPutRules
	mPing
	numMethods
)

// MethodNames lists every method: this fails to compile if a name is missing.
var _ [numMethods]string = MethodNames

// NewCounting wraps s.
func NewCounting(s Store) *Counting { return &Counting{s: s} }

// Unwrap returns the wrapped store (for optional capabilities such as Migrate).
func (c *Counting) Unwrap() Store { return c.s }

// Counts returns the number of calls per method, indexed like MethodNames.
func (c *Counting) Counts() [numMethods]int64 {
	var out [numMethods]int64
	for i := range c.calls {
		out[i] = c.calls[i].Load()
	}
	return out
}

// Total returns the number of calls of every method together.
func (c *Counting) Total() int64 {
	var n int64
	for i := range c.calls {
		n += c.calls[i].Load()
	}
	return n
}

func (c *Counting) count(m int) { c.calls[m].Add(1) }

func (c *Counting) CreateBucket(ctx context.Context, b *coffer.Bucket) error {
	c.count(mCreateBucket)
	return c.s.CreateBucket(ctx, b)
}

func (c *Counting) GetBucket(ctx context.Context, id string) (*coffer.Bucket, error) {
	c.count(mGetBucket)
	return c.s.GetBucket(ctx, id)
}

func (c *Counting) ListBuckets(ctx context.Context) ([]*coffer.Bucket, error) {
	c.count(mListBuckets)
	return c.s.ListBuckets(ctx)
}

func (c *Counting) UpdateBucket(ctx context.Context, id string, u coffer.BucketUpdate) (*coffer.Bucket, error) {
	c.count(mUpdateBucket)
	return c.s.UpdateBucket(ctx, id, u)
}

func (c *Counting) DeleteBucket(ctx context.Context, id string) error {
	c.count(mDeleteBucket)
	return c.s.DeleteBucket(ctx, id)
}

func (c *Counting) BeginUpload(ctx context.Context, blobKey string, f *coffer.File) error {
	c.count(mBeginUpload)
	return c.s.BeginUpload(ctx, blobKey, f)
}

func (c *Counting) CommitUpload(ctx context.Context, id, blobKey string, u coffer.FileUpdate) (*coffer.File, *coffer.File, error) {
	c.count(mCommitUpload)
	return c.s.CommitUpload(ctx, id, blobKey, u)
}

func (c *Counting) CreateFiles(ctx context.Context, files []*coffer.File) error {
	c.count(mCreateFiles)
	return c.s.CreateFiles(ctx, files)
}

func (c *Counting) AbortUpload(ctx context.Context, blobKey string) error {
	c.count(mAbortUpload)
	return c.s.AbortUpload(ctx, blobKey)
}

func (c *Counting) StaleIntents(ctx context.Context, olderThan time.Time) ([]Intent, error) {
	c.count(mStaleIntents)
	return c.s.StaleIntents(ctx, olderThan)
}

func (c *Counting) BlobReferenced(ctx context.Context, blobKey string) (bool, error) {
	c.count(mBlobReferenced)
	return c.s.BlobReferenced(ctx, blobKey)
}

func (c *Counting) GetFileByName(ctx context.Context, bucket, name string) (*coffer.File, error) {
	c.count(mGetFileByName)
	return c.s.GetFileByName(ctx, bucket, name)
}

func (c *Counting) PutFileByName(ctx context.Context, f *coffer.File, p Precondition) (*coffer.File, *coffer.File, error) {
	c.count(mPutFileByName)
	return c.s.PutFileByName(ctx, f, p)
}

func (c *Counting) GetFile(ctx context.Context, id string) (*coffer.File, error) {
	c.count(mGetFile)
	return c.s.GetFile(ctx, id)
}

func (c *Counting) UpdateFile(ctx context.Context, id string, u coffer.FileUpdate) (*coffer.File, error) {
	c.count(mUpdateFile)
	return c.s.UpdateFile(ctx, id, u)
}

func (c *Counting) DeleteFile(ctx context.Context, id string) (*coffer.File, error) {
	c.count(mDeleteFile)
	return c.s.DeleteFile(ctx, id)
}

func (c *Counting) ListFiles(ctx context.Context, opt coffer.ListOptions) (coffer.Page, error) {
	c.count(mListFiles)
	return c.s.ListFiles(ctx, opt)
}

func (c *Counting) ListNotUploaded(ctx context.Context, limit int) ([]*coffer.File, error) {
	c.count(mListNotUploaded)
	return c.s.ListNotUploaded(ctx, limit)
}

func (c *Counting) EachFile(ctx context.Context, fn func(*coffer.File) error) error {
	c.count(mEachFile)
	return c.s.EachFile(ctx, fn)
}

func (c *Counting) GetRules(ctx context.Context) ([]byte, error) {
	c.count(mGetRules)
	return c.s.GetRules(ctx)
}

func (c *Counting) PutRules(ctx context.Context, doc []byte) error {
	c.count(mPutRules)
	return c.s.PutRules(ctx, doc)
}

func (c *Counting) Ping(ctx context.Context) error {
	c.count(mPing)
	return c.s.Ping(ctx)
}

func (c *Counting) Close() error { return c.s.Close() }
