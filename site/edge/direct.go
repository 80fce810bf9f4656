package edge

import (
	"context"
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/coffer/coffer/site"
)

// direct fetches req from its origin for one client without caching (NoStore
// requests, and requests that joined a flight whose answer was not cacheable).
// It still goes through the origin's circuit breaker.
func (c *Cache) direct(ctx context.Context, req site.EdgeRequest) (*site.Object, error) {
	id := req.Origin.ID()
	if !c.breakers.allow(id, c.cfg.now()) {
		return nil, unavailable(errBreakerOpen)
	}
	c.stats.fetches.Add(1)
	f, err := req.Origin.Fetch(ctx, req.Key, "", time.Time{})
	if err != nil {
		if ctx.Err() == nil {
			c.originFailed(id)
		}
		return nil, unavailable(err)
	}
	c.breakers.success(id)
	switch f.Status {
	case http.StatusOK:
		c.stats.bypass.Add(1)
		return passThrough(f), nil
	case http.StatusNotFound:
		closeBody(f)
		return nil, notFound(req.Key)
	}
	closeBody(f)
	return nil, unavailable(errors.New("edge: unexpected origin status " + http.StatusText(f.Status)))
}

// passThrough makes an Object of an origin's answer streamed through uncached
// (BYPASS).
func passThrough(f *site.Fetched) *site.Object {
	h := f.Header
	lm, _ := http.ParseTime(h.Get("Last-Modified"))
	body := &streamBody{r: f.Body, size: f.Size}
	return &site.Object{
		Content: body, Size: f.Size, ModTime: lm, ETag: h.Get("ETag"),
		Type: h.Get("Content-Type"), Encoding: h.Get("Content-Encoding"),
		Tags: mergeTags(nil, h.Get("Surrogate-Key")), CacheControl: h.Get("Cache-Control"),
		Cache: site.CacheBypass, Closer: f.Body,
	}
}

// streamBody is an origin body as an io.ReadSeeker: it seeks forward only (by
// reading and discarding), which is what http.ServeContent needs for a single
// range (it asks for the end, then seeks to the range's start). It checks the
// body's length: fewer or more bytes than the Content-Length is an error,
// never a clean end.
type streamBody struct {
	r         io.Reader
	size      int64 // -1 unknown
	read, pos int64 // bytes consumed; the position asked for by Seek
}

// Read implements io.Reader.
func (b *streamBody) Read(p []byte) (int, error) {
	if b.pos > b.read {
		if _, err := io.CopyN(io.Discard, rawBody{b}, b.pos-b.read); err != nil {
			return 0, err
		}
	}
	if b.pos < b.read {
		return 0, errSeek
	}
	n, err := b.raw(p)
	b.pos = b.read
	return n, err
}

// raw reads the body, counting and checking its length.
func (b *streamBody) raw(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.read += int64(n)
	if b.size >= 0 && b.read > b.size {
		return n, errLonger
	}
	if err == io.EOF && b.size >= 0 && b.read < b.size {
		err = errShort
	}
	return n, err
}

// rawBody reads a streamBody without its seek position (to skip forward).
type rawBody struct{ b *streamBody }

func (r rawBody) Read(p []byte) (int, error) { return r.b.raw(p) }

// Seek implements io.Seeker: to any offset within a known size, without
// moving the read position until the next Read (which skips forward to it).
func (b *streamBody) Seek(off int64, whence int) (int64, error) {
	abs, err := seekTo(b.pos, b.size, off, whence)
	if err == nil {
		b.pos = abs
	}
	return abs, err
}
