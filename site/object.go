package site

import (
	"context"
	"io"
	"net/http"
	"time"
)

// CacheStatus is how an answer was served, as the audit log and the
// X-Cache response header name it.
type CacheStatus string

// Cache statuses.
const (
	CacheHit         CacheStatus = "HIT"         // from the edge cache, fresh
	CacheMiss        CacheStatus = "MISS"        // fetched from the upstream (and cached)
	CacheStale       CacheStatus = "STALE"       // a stale copy (while revalidating, or the upstream failed)
	CacheRevalidated CacheStatus = "REVALIDATED" // a stale copy the upstream confirmed (304)
	CacheBypass      CacheStatus = "BYPASS"      // not cacheable (bucket targets, no-store, redirects)
)

// Object is content to answer with. Content reads from the start; when Size is
// known (>= 0) it seeks too, so http.ServeContent can serve ranges from it (an
// edge object still filling blocks a read past what has arrived, and fails it if
// the fill fails: it never ends early with io.EOF). Close releases it.
type Object struct {
	Content  io.ReadSeeker
	Size     int64 // -1: unknown (an upstream without Content-Length, still filling)
	ModTime  time.Time
	ETag     string // quoted entity tag, "" when none
	Type     string // Content-Type
	Encoding string // Content-Encoding of Content ("" identity)
	// Tags are the object's own surrogate keys (an upstream's Surrogate-Key header,
	// a bucket file's metadata "tags").
	Tags []string
	// CacheControl is the upstream's Cache-Control ("" for none), for routes that
	// do not set their own.
	CacheControl string
	Cache        CacheStatus
	// Shared is set on a bucket file whose bucket roles other than the admin may
	// write (see BucketTarget): the file may be any of their users' content.
	Shared bool
	// Uploader is a bucket file's uploaded_by_user_id ("" when no rule's preset
	// set it: the admin's, or an unknown user's).
	Uploader string
	Closer   io.Closer // nil: nothing to release
}

// Close releases the object's resources.
func (o *Object) Close() error {
	if o.Closer == nil {
		return nil
	}
	return o.Closer.Close()
}

// Origin is an upstream the edge cache fills from (package edge implements it for
// HTTP origins and S3 buckets).
type Origin interface {
	// ID identifies the origin's configuration (its URL or endpoint/bucket/prefix and
	// credentials' digest): cached objects are keyed by it, so a changed origin
	// never serves the old one's objects.
	ID() string
	// Fetch GETs key. A non-empty ifNoneMatch/ifModifiedSince makes it conditional;
	// the answer's Status is then 304 with no body when the object is unchanged.
	// A missing object is Status 404 with a nil error; an error means the origin
	// failed (unreachable, timeout, 5xx): the edge serves stale-if-error then.
	Fetch(ctx context.Context, key, ifNoneMatch string, ifModifiedSince time.Time) (*Fetched, error)
}

// Fetched is an origin's answer. Body is nil for 304 and 404.
type Fetched struct {
	Status int
	Header http.Header // ETag, Last-Modified, Content-Type, Cache-Control, Surrogate-Key, ...
	Size   int64       // Content-Length, -1 when not sent
	Body   io.ReadCloser
}

// EdgeRequest asks the edge cache for an upstream object.
type EdgeRequest struct {
	// Scope is the purge unit the entry belongs to: "<tenant>/<site>".
	Scope string
	// Path is the request path the object answers ("/assets/app.js"): purges by
	// path and prefix match it.
	Path string
	// Key is the upstream key Origin.Fetch gets.
	Key    string
	Origin Origin
	Policy EdgePolicy
	// Tags are the route's surrogate keys; the upstream's Surrogate-Key adds to them.
	Tags []string
	// NoStore: fetch without keeping a copy (e.g. a request with credentials).
	NoStore bool
}

// DerivedRequest asks the edge cache for a copy derived from another object (a
// compressed encoding): made once by Make, kept on disk under the same bounds,
// purged with its Path, and coalesced as fills are.
type DerivedRequest struct {
	Scope string
	Path  string
	// Variant names the derivation ("br", "zstd", "gzip"); SourceETag the
	// version of the object it was made from (a new version is a new entry).
	Variant    string
	SourceETag string
	Tags       []string
	// Type is the Content-Type of the result.
	Type string
	// Make writes the derived bytes to w.
	Make func(ctx context.Context, w io.Writer) error
}

// Purge says what to drop from a scope: entries whose Path equals one of Paths,
// starts with one of Prefixes, or carries one of Tags. All empty: the whole scope.
type Purge struct {
	Paths    []string `json:"paths,omitempty"`
	Prefixes []string `json:"prefixes,omitempty"`
	Tags     []string `json:"tags,omitempty"`
}

// Edge is the pull-through disk cache (package edge).
type Edge interface {
	// Get answers req from the cache or its origin (see package edge): a 404 from
	// the origin is ENOTFOUND (remembered for the policy's NegativeTTL); an origin
	// failure without a stale copy to serve is EUNAVAILABLE.
	Get(ctx context.Context, req EdgeRequest) (*Object, error)
	// Derived answers req from the cache, making it on a miss.
	Derived(ctx context.Context, req DerivedRequest) (*Object, error)
	// Purge drops what p names from scope and returns how many entries went.
	Purge(scope string, p Purge) int
}

// Buckets opens files of a tenant's coffer buckets by name (the app implements it
// over the service and its hot-path caches).
type Buckets interface {
	// Open returns the uploaded file named key in bucket: ENOTFOUND if none.
	// Cache is CacheBypass; Tags come from the file's metadata "tags"; Shared
	// says roles other than the admin may write the bucket, Uploader is the
	// file's uploaded_by_user_id.
	Open(ctx context.Context, bucket, key string) (*Object, error)
}

// FastEdge is an Edge that answers from what it already holds, for the HTTP/1.1
// fast path (Handler.ServeFast): nothing is fetched, made or counted, so a
// request the fast path then declines is served from the start through Serve
// with nothing changed.
type FastEdge interface {
	Edge
	// Peek returns req's fresh committed copy (Cache HIT), or missing true when the
	// origin is known not to have req.Key (a negative entry); (nil, false) when only
	// Get can tell.
	Peek(req EdgeRequest) (obj *Object, missing bool)
	// PeekDerived returns req's committed copy, nil if there is none.
	PeekDerived(req DerivedRequest) *Object
	// CountPeeks counts hits and negative hits of peeks served, as Get and Derived
	// count theirs.
	CountPeeks(hits, negativeHits int)
}
