package cache

import (
	"context"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/meta"
)

// The methods below go straight to the wrapped store. They are written out, not left
// to the embedded interface, so that a method added to meta.Store has to be added here
// too (TestMetaMethodsExplicit) with a decision about what it invalidates: these
// read nothing the cache holds, or change only rows it never holds (files not yet
// uploaded, intents), or change what is reloaded elsewhere (the rules).

func (m *Meta) ListBuckets(ctx context.Context) ([]*coffer.Bucket, error) {
	return m.Store.ListBuckets(ctx)
}

// AbortUpload removes an intent and a row that is not uploaded: never cached.
func (m *Meta) AbortUpload(ctx context.Context, blobKey string) error {
	return m.Store.AbortUpload(ctx, blobKey)
}

func (m *Meta) StaleIntents(ctx context.Context, olderThan time.Time) ([]meta.Intent, error) {
	return m.Store.StaleIntents(ctx, olderThan)
}

func (m *Meta) BlobReferenced(ctx context.Context, blobKey string) (bool, error) {
	return m.Store.BlobReferenced(ctx, blobKey)
}

func (m *Meta) ListFiles(ctx context.Context, opt coffer.ListOptions) (coffer.Page, error) {
	return m.Store.ListFiles(ctx, opt)
}

func (m *Meta) ListNotUploaded(ctx context.Context, limit int) ([]*coffer.File, error) {
	return m.Store.ListNotUploaded(ctx, limit)
}

func (m *Meta) EachFile(ctx context.Context, fn func(*coffer.File) error) error {
	return m.Store.EachFile(ctx, fn)
}

func (m *Meta) GetRules(ctx context.Context) ([]byte, error) { return m.Store.GetRules(ctx) }

// PutRules stores the rules: the service reloads its own after storing them, other
// nodes hear of the change through the invalidation bus.
func (m *Meta) PutRules(ctx context.Context, doc []byte) error { return m.Store.PutRules(ctx, doc) }

func (m *Meta) Ping(ctx context.Context) error { return m.Store.Ping(ctx) }

func (m *Meta) Close() error { return m.Store.Close() }
