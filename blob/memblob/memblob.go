// Package memblob is an in-memory blob driver for fast tests of upper layers. It holds
// whole blobs in memory: never use it to serve real traffic.
package memblob

import (
	"bytes"
	"context"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/blob"
)

// Driver is an in-memory blob.Driver.
type Driver struct {
	mu      sync.RWMutex
	blobs   map[string]entry
	uploads map[string]*upload // blob.Multipart uploads by id
}

type entry struct {
	data []byte
	mod  time.Time
}

var _ blob.Driver = (*Driver)(nil)

// New returns an empty driver.
func New() *Driver { return &Driver{blobs: map[string]entry{}, uploads: map[string]*upload{}} }

// Put implements blob.Driver.
func (d *Driver) Put(ctx context.Context, key string, r io.Reader, size int64) (blob.Attrs, error) {
	data, err := readAll(ctx, r, size)
	if err != nil {
		return blob.Attrs{}, err
	}
	e := entry{data: data, mod: time.Now().UTC()}
	d.mu.Lock()
	d.blobs[key] = e
	d.mu.Unlock()
	return blob.Attrs{Key: key, Size: int64(len(e.data)), ModTime: e.mod}, nil
}

// Open implements blob.Driver.
func (d *Driver) Open(ctx context.Context, key string) (blob.Reader, error) {
	d.mu.RLock()
	e, ok := d.blobs[key]
	d.mu.RUnlock()
	if !ok {
		return nil, coffer.Errorf(coffer.ENOTFOUND, "blob not found")
	}
	return &reader{Reader: bytes.NewReader(e.data), attrs: blob.Attrs{Key: key, Size: int64(len(e.data)), ModTime: e.mod}}, nil
}

// Stat implements blob.Driver.
func (d *Driver) Stat(ctx context.Context, key string) (blob.Attrs, error) {
	d.mu.RLock()
	e, ok := d.blobs[key]
	d.mu.RUnlock()
	if !ok {
		return blob.Attrs{}, coffer.Errorf(coffer.ENOTFOUND, "blob not found")
	}
	return blob.Attrs{Key: key, Size: int64(len(e.data)), ModTime: e.mod}, nil
}

// Delete implements blob.Driver.
func (d *Driver) Delete(ctx context.Context, key string) error {
	d.mu.Lock()
	delete(d.blobs, key)
	d.mu.Unlock()
	return nil
}

// List implements blob.Driver.
func (d *Driver) List(ctx context.Context, prefix string, fn func(blob.Attrs) error) error {
	d.mu.RLock()
	var attrs []blob.Attrs
	for k, e := range d.blobs {
		if strings.HasPrefix(k, prefix) {
			attrs = append(attrs, blob.Attrs{Key: k, Size: int64(len(e.data)), ModTime: e.mod})
		}
	}
	d.mu.RUnlock()
	sort.Slice(attrs, func(i, j int) bool { return attrs[i].Key < attrs[j].Key })
	for _, a := range attrs {
		if err := fn(a); err != nil {
			return err
		}
	}
	return nil
}

// readAll reads r whole, failing if it yields other than size bytes (size >= 0), if it
// fails, or if ctx is done.
func readAll(ctx context.Context, r io.Reader, size int64) ([]byte, error) {
	var buf bytes.Buffer
	if _, err := io.Copy(&buf, blob.ContextReader(ctx, r)); err != nil {
		return nil, err
	}
	if size >= 0 && int64(buf.Len()) != size {
		return nil, coffer.Errorf(coffer.EINVALID, "blob size %d does not match the declared %d", buf.Len(), size)
	}
	return buf.Bytes(), ctx.Err()
}

// Close implements blob.Driver.
func (d *Driver) Close() error { return nil }

type reader struct {
	*bytes.Reader
	attrs blob.Attrs
}

func (r *reader) Close() error      { return nil }
func (r *reader) Attrs() blob.Attrs { return r.attrs }
