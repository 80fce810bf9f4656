package site

import (
	"bytes"
	"context"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coffer/coffer"
)

// memFile is a file of the in-memory test targets.
type memFile struct {
	data []byte
	typ  string
	etag string
	tags []string
	cc   string
	// shared and uploader are a bucket file's Shared and Uploader.
	shared   bool
	uploader string
}

// object returns f as an Object with cache status cs.
func (f memFile) object(cs CacheStatus) *Object {
	return &Object{
		Content: bytes.NewReader(f.data), Size: int64(len(f.data)), ModTime: time.Unix(1700000000, 0),
		ETag: f.etag, Type: f.typ, Tags: f.tags, CacheControl: f.cc, Cache: cs, Shared: f.shared, Uploader: f.uploader,
	}
}

// memBuckets is an in-memory Buckets: files by "bucket/key". It records every
// key opened and counts keys coffer.CleanName would refuse.
type memBuckets struct {
	mu      sync.Mutex
	files   map[string]memFile
	opened  []string
	badKeys atomic.Int32
	fail    error // returned by every Open when set
}

var _ Buckets = (*memBuckets)(nil)

func (b *memBuckets) Open(ctx context.Context, bucket, key string) (*Object, error) {
	if c, err := coffer.CleanName(key); err != nil || c != key {
		b.badKeys.Add(1)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.opened = append(b.opened, bucket+"/"+key)
	if b.fail != nil {
		return nil, b.fail
	}
	f, ok := b.files[bucket+"/"+key]
	if !ok {
		return nil, coffer.Errorf(coffer.ENOTFOUND, "no such file")
	}
	return f.object(CacheBypass), nil
}

// memOrigin is an Origin that only names itself: memEdge serves its objects.
type memOrigin struct{ id string }

func (o memOrigin) ID() string { return o.id }
func (o memOrigin) Fetch(context.Context, string, string, time.Time) (*Fetched, error) {
	panic("memEdge never fetches")
}

// memOrigins is the OriginFactory of the tests.
type memOrigins struct{}

func (memOrigins) HTTP(o HTTPOrigin) (Origin, error)       { return memOrigin{"http:" + o.URL}, nil }
func (memOrigins) S3(o S3Origin, _ string) (Origin, error) { return memOrigin{"s3:" + o.Bucket}, nil }

// memEdge is an in-memory Edge: upstream objects by "<origin id>|<key>", all
// HITs; derived copies made once per (scope, path, variant, source), with
// concurrent requests for one waiting on the first (as package edge coalesces).
type memEdge struct {
	mu      sync.Mutex
	objects map[string]memFile
	derived map[string]*derivedEntry
	gets    []EdgeRequest
	makes   atomic.Int32
	fail    error // returned by every Get when set
}

// derivedEntry is one derived copy, done when made.
type derivedEntry struct {
	done chan struct{}
	data []byte
	err  error
}

var _ Edge = (*memEdge)(nil)

func (e *memEdge) Get(ctx context.Context, req EdgeRequest) (*Object, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.gets = append(e.gets, req)
	if e.fail != nil {
		return nil, e.fail
	}
	f, ok := e.objects[req.Origin.ID()+"|"+req.Key]
	if !ok {
		return nil, coffer.Errorf(coffer.ENOTFOUND, "upstream 404")
	}
	return f.object(CacheHit), nil
}

func (e *memEdge) Derived(ctx context.Context, req DerivedRequest) (*Object, error) {
	id := req.Scope + "|" + req.Path + "|" + req.Variant + "|" + req.SourceETag
	e.mu.Lock()
	if e.derived == nil {
		e.derived = map[string]*derivedEntry{}
	}
	d, ok := e.derived[id]
	if !ok {
		d = &derivedEntry{done: make(chan struct{})}
		e.derived[id] = d
	}
	e.mu.Unlock()
	if !ok {
		e.makes.Add(1)
		var buf bytes.Buffer
		d.err = req.Make(ctx, &buf)
		d.data = buf.Bytes()
		close(d.done)
	}
	<-d.done
	if d.err != nil {
		return nil, d.err
	}
	return memFile{data: d.data, typ: req.Type, tags: req.Tags}.object(CacheHit), nil
}

func (e *memEdge) Purge(string, Purge) int { return 0 }

// readAll reads r for tests.
func readAll(r io.Reader) []byte {
	b, _ := io.ReadAll(r)
	return b
}
