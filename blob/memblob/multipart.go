package memblob

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/rand"
	"encoding/hex"
	"io"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/blob"
)

// upload is a multipart upload in progress.
type upload struct {
	key     string
	created time.Time
	parts   map[int]part
}

// part is a stored part and its ETag.
type part struct {
	data []byte
	etag string
}

var _ blob.Multipart = (*Driver)(nil)

// CreateUpload implements blob.Multipart.
func (d *Driver) CreateUpload(ctx context.Context, key string) (string, error) {
	var r [16]byte
	rand.Read(r[:])
	id := hex.EncodeToString(r[:])
	d.mu.Lock()
	d.uploads[id] = &upload{key: key, created: time.Now().UTC(), parts: map[int]part{}}
	d.mu.Unlock()
	return id, nil
}

// PutPart implements blob.Multipart.
func (d *Driver) PutPart(ctx context.Context, key, id string, n int, r io.Reader, size int64) (blob.Part, error) {
	if n < 1 || n > blob.MaxParts {
		return blob.Part{}, coffer.Errorf(coffer.EINVALID, "part number %d out of 1..%d", n, blob.MaxParts)
	}
	d.mu.RLock()
	_, err := d.upload(key, id)
	d.mu.RUnlock()
	if err != nil {
		return blob.Part{}, err
	}
	data, err := readAll(ctx, r, size)
	if err != nil {
		return blob.Part{}, err
	}
	sum := md5.Sum(data)
	p := part{data: data, etag: hex.EncodeToString(sum[:])}
	d.mu.Lock()
	defer d.mu.Unlock()
	u, err := d.upload(key, id)
	if err != nil {
		return blob.Part{}, err
	}
	u.parts[n] = p
	return blob.Part{Number: n, Size: int64(len(data)), ETag: p.etag}, nil
}

// Parts implements blob.Multipart.
func (d *Driver) Parts(ctx context.Context, key, id string) ([]blob.Part, error) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	u, err := d.upload(key, id)
	if err != nil {
		return nil, err
	}
	var ps []blob.Part
	for n := 1; len(ps) < len(u.parts); n++ {
		if p, ok := u.parts[n]; ok {
			ps = append(ps, blob.Part{Number: n, Size: int64(len(p.data)), ETag: p.etag})
		}
	}
	return ps, nil
}

// Complete implements blob.Multipart.
func (d *Driver) Complete(ctx context.Context, key, id string, parts []blob.Part) (blob.Attrs, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	u, err := d.upload(key, id)
	if err != nil {
		return blob.Attrs{}, err
	}
	var buf bytes.Buffer
	for i, p := range parts {
		stored, ok := u.parts[p.Number]
		if !ok || stored.etag != p.ETag || (i > 0 && p.Number <= parts[i-1].Number) {
			return blob.Attrs{}, coffer.Errorf(coffer.EINVALID, "part %d is missing, out of order or changed", p.Number)
		}
		buf.Write(stored.data)
	}
	if len(parts) == 0 {
		return blob.Attrs{}, coffer.Errorf(coffer.EINVALID, "no parts to complete the upload with")
	}
	e := entry{data: buf.Bytes(), mod: time.Now().UTC()}
	d.blobs[key] = e
	delete(d.uploads, id)
	return blob.Attrs{Key: key, Size: int64(len(e.data)), ModTime: e.mod}, nil
}

// Abort implements blob.Multipart.
func (d *Driver) Abort(ctx context.Context, key, id string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, err := d.upload(key, id); err == nil {
		delete(d.uploads, id)
	}
	return nil
}

// Uploads implements blob.Multipart.
func (d *Driver) Uploads(ctx context.Context, fn func(blob.Upload) error) error {
	d.mu.RLock()
	var ups []blob.Upload
	for id, u := range d.uploads {
		ups = append(ups, blob.Upload{Key: u.key, ID: id, Created: u.created})
	}
	d.mu.RUnlock()
	for _, u := range ups {
		if err := fn(u); err != nil {
			return err
		}
	}
	return nil
}

// upload returns upload id of key; ENOTFOUND if there is none. d.mu is held.
func (d *Driver) upload(key, id string) (*upload, error) {
	u, ok := d.uploads[id]
	if !ok || u.key != key {
		return nil, coffer.Errorf(coffer.ENOTFOUND, "upload not found")
	}
	return u, nil
}
