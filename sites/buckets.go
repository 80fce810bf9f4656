package sites

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/internal/httpserve"
	"github.com/coffer/coffer/service"
	"github.com/coffer/coffer/site"
	"github.com/maypok86/otter/v2"
)

// Bounds of the name cache.
const (
	nameCacheEntries = 100_000
	// namePositiveTTL is a safety net only: a name's file is dropped when a write on
	// any node changes it (OnFileWritten here, a purge broadcast elsewhere).
	namePositiveTTL = 5 * time.Minute
	// nameNegativeTTL bounds how long a missing name is remembered; a file created
	// under it purges it sooner the same way.
	nameNegativeTTL = 10 * time.Second
)

// nameCache remembers which file a site serves for a name of a bucket, so that a
// hot path of a site costs no metadata query: (tenant, bucket, name) → file id, or
// "" for none. Concurrent misses of one name make one lookup (otter's loader).
type nameCache struct {
	c *otter.Cache[string, string]
}

// newNameCache returns an empty name cache.
func newNameCache() (*nameCache, error) {
	c, err := otter.New(&otter.Options[string, string]{
		MaximumSize: nameCacheEntries,
		ExpiryCalculator: otter.ExpiryWritingFunc(func(e otter.Entry[string, string]) time.Duration {
			if e.Value == "" {
				return nameNegativeTTL
			}
			return namePositiveTTL
		}),
	})
	if err != nil {
		return nil, err
	}
	return &nameCache{c: c}, nil
}

// nameKey is the cache key of name in tenant's bucket (NUL separates: no id or
// name contains one).
func nameKey(tenant, bucket, name string) string { return tenant + "\x00" + bucket + "\x00" + name }

// drop forgets name in tenant's bucket.
func (n *nameCache) drop(tenant, bucket, name string) { n.c.Invalidate(nameKey(tenant, bucket, name)) }

// dropTenant forgets every name of tenant (purges by prefix or tag of a site over
// buckets, which do not name the files).
func (n *nameCache) dropTenant(tenant string) {
	prefix := tenant + "\x00"
	for k := range n.c.Keys() {
		if strings.HasPrefix(k, prefix) {
			n.c.Invalidate(k)
		}
	}
}

// siteBuckets opens a tenant's files by name for its sites (site.Buckets).
type siteBuckets struct {
	st     *Runtime
	tenant string
	svc    *service.Service
}

var _ site.Buckets = siteBuckets{}

// Open implements site.Buckets: the file id from the name cache (looked up on a
// miss), its row and bytes through the service's hot-path caches; Shared from the
// tenant's current rules. A remembered id
// whose file no longer carries the name is looked up again once.
func (b siteBuckets) Open(ctx context.Context, bucket, key string) (*site.Object, error) {
	k := nameKey(b.tenant, bucket, key)
	for attempt := 0; attempt < 2; attempt++ {
		id, err := b.st.names.c.Get(ctx, k, otter.LoaderFunc[string, string](func(ctx context.Context, _ string) (string, error) {
			f, err := b.svc.SiteFile(ctx, bucket, key)
			if coffer.ErrorCode(err) == coffer.ENOTFOUND {
				return "", nil
			}
			if err != nil {
				return "", err
			}
			return f.ID, nil
		}))
		if err != nil {
			return nil, err
		}
		if id == "" {
			return nil, coffer.Errorf(coffer.ENOTFOUND, "not found")
		}
		f, rd, err := b.svc.OpenSiteFile(ctx, bucket, key, id)
		if coffer.ErrorCode(err) == coffer.ENOTFOUND {
			b.st.names.c.Invalidate(k)
			continue
		}
		if err != nil {
			return nil, err
		}
		return &site.Object{Content: httpserve.SeekerOf(rd), Size: f.Size, ModTime: f.UpdatedAt, ETag: f.ETag,
			Type: f.MimeType, Tags: metadataTags(f.Metadata), Cache: site.CacheBypass, Closer: rd,
			Shared: b.svc.SiteBucketWritable(bucket), Uploader: f.UploadedByUserID}, nil
	}
	return nil, coffer.Errorf(coffer.ENOTFOUND, "not found")
}

// metadataTags returns the surrogate keys in a file's metadata "tags": a JSON array
// of strings or one space-separated string; nothing for anything else.
func metadataTags(md json.RawMessage) []string {
	if len(md) == 0 || !strings.Contains(string(md), `"tags"`) {
		return nil
	}
	var doc struct {
		Tags json.RawMessage `json:"tags"`
	}
	if json.Unmarshal(md, &doc) != nil || len(doc.Tags) == 0 {
		return nil
	}
	var list []string
	if json.Unmarshal(doc.Tags, &list) == nil {
		return list
	}
	var one string
	if json.Unmarshal(doc.Tags, &one) == nil {
		return strings.Fields(one)
	}
	return nil
}
