package cache

import (
	"context"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/meta"
)

// The methods below go straight to the wrapped store. The store is a field, not an
// embedded interface, so that a method added to meta.Store does not compile until it
// is added here too (TestMetaMethodsExplicit checks it as well), with a decision
// about what it invalidates: these
// read nothing the cache holds, or change only rows it never holds (files not yet
// uploaded, intents), or change what is reloaded elsewhere (the rules).

func (m *Meta) ListBuckets(ctx context.Context) ([]*coffer.Bucket, error) {
	return m.store.ListBuckets(ctx)
}

// AbortUpload removes an intent and a row that is not uploaded: never cached.
func (m *Meta) AbortUpload(ctx context.Context, blobKey string) error {
	return m.store.AbortUpload(ctx, blobKey)
}

func (m *Meta) StaleIntents(ctx context.Context, olderThan time.Time) ([]meta.Intent, error) {
	return m.store.StaleIntents(ctx, olderThan)
}

func (m *Meta) BlobReferenced(ctx context.Context, blobKey string) (bool, error) {
	return m.store.BlobReferenced(ctx, blobKey)
}

func (m *Meta) ListFiles(ctx context.Context, opt coffer.ListOptions) (coffer.Page, error) {
	return m.store.ListFiles(ctx, opt)
}

func (m *Meta) ListNotUploaded(ctx context.Context, limit int) ([]*coffer.File, error) {
	return m.store.ListNotUploaded(ctx, limit)
}

func (m *Meta) EachFile(ctx context.Context, fn func(*coffer.File) error) error {
	return m.store.EachFile(ctx, fn)
}

func (m *Meta) GetRules(ctx context.Context) ([]byte, error) { return m.store.GetRules(ctx) }

// PutRules stores the rules: the service reloads its own after storing them, other
// nodes hear of the change through the invalidation bus.
func (m *Meta) PutRules(ctx context.Context, doc []byte) error { return m.store.PutRules(ctx, doc) }

func (m *Meta) Ping(ctx context.Context) error { return m.store.Ping(ctx) }

func (m *Meta) Close() error { return m.store.Close() }
