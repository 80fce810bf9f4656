package service

import (
	"context"

	"github.com/coffer/coffer/blob"
)

// ContentCache opens blobs to read, holding small hot ones in memory (cache.Content
// implements it). Blob keys are never reused, so entries need no invalidation but
// Forget of a deleted blob.
type ContentCache interface {
	// Open returns a reader of blob key, whose size the metadata says is size; hit
	// reports that it came from memory. ENOTFOUND if the blob is not in the store.
	Open(ctx context.Context, key string, size int64) (r blob.Reader, hit bool, err error)
	// Forget drops blob key, which was deleted.
	Forget(key string)
}

// VariantCache keeps transformed images (cache.Variants implements it), keyed by
// file id, the source's etag and the canonical options (imaging.VariantKey).
type VariantCache interface {
	// Get returns the variant from the cache, else made by produce (and cached);
	// where says which, for Server-Timing ("memory", "store" or "made"). It returns
	// produce's error.
	Get(ctx context.Context, fileID, etag, canonical string, produce func(context.Context) ([]byte, error)) (data []byte, where string, err error)
	// Forget removes every variant of a replaced or deleted file.
	Forget(ctx context.Context, fileID string)
}

// Caches are the decorators the service reads through, built by the caller (app). A
// nil one is off: every blob is opened from the store, every variant is made.
type Caches struct {
	Content  ContentCache
	Variants VariantCache
}

// orUncached returns c with its nil caches replaced by pass-throughs to blobs.
func (c Caches) orUncached(blobs *blob.Store) Caches {
	if c.Content == nil {
		c.Content = uncachedContent{blobs}
	}
	if c.Variants == nil {
		c.Variants = uncachedVariants{}
	}
	return c
}

// uncachedContent opens every blob from the store.
type uncachedContent struct{ blobs *blob.Store }

// Open opens key from the store; hit is always false.
func (u uncachedContent) Open(ctx context.Context, key string, _ int64) (blob.Reader, bool, error) {
	r, err := u.blobs.Open(ctx, key)
	return r, false, err
}

// Forget does nothing: nothing is held.
func (uncachedContent) Forget(string) {}

// uncachedVariants makes every variant.
type uncachedVariants struct{}

// Get returns what produce makes, "made".
func (uncachedVariants) Get(ctx context.Context, _, _, _ string, produce func(context.Context) ([]byte, error)) ([]byte, string, error) {
	data, err := produce(ctx)
	if err != nil {
		return nil, "", err
	}
	return data, "made", nil
}

// Forget does nothing: nothing is kept.
func (uncachedVariants) Forget(context.Context, string) {}
