package s3blob

import (
	"context"
	"io"
	"os"
	"strings"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/blob"
	"github.com/minio/minio-go/v7"
)

// Multipart maps blob.Multipart onto S3's multipart upload calls one to one. A part of
// unknown size is spooled to a temp file first (S3 needs each part's length); a part
// that yields more bytes than declared fails before S3 has all of it, so it never
// replaces the part stored before.

var _ blob.Multipart = (*Driver)(nil)

// core is minio-go's low-level API, which exposes the multipart calls.
func (d *Driver) core() minio.Core { return minio.Core{Client: d.c} }

// CreateUpload implements blob.Multipart.
func (d *Driver) CreateUpload(ctx context.Context, key string) (string, error) {
	id, err := d.core().NewMultipartUpload(ctx, d.bucket, key, minio.PutObjectOptions{ContentType: "application/octet-stream"})
	return id, mapErr(err)
}

// PutPart implements blob.Multipart.
func (d *Driver) PutPart(ctx context.Context, key, id string, n int, r io.Reader, size int64) (blob.Part, error) {
	if n < 1 || n > blob.MaxParts {
		return blob.Part{}, coffer.Errorf(coffer.EINVALID, "part number %d out of 1..%d", n, blob.MaxParts)
	}
	if size < 0 {
		f, m, err := spool(ctx, r)
		if err != nil {
			return blob.Part{}, err
		}
		defer os.Remove(f.Name())
		defer f.Close()
		r, size = f, m
	}
	er := &exactReader{r: r, left: size}
	p, err := d.core().PutObjectPart(ctx, d.bucket, key, id, n, er, size, minio.PutObjectPartOptions{})
	if er.err != nil {
		return blob.Part{}, er.err
	}
	if err != nil {
		return blob.Part{}, mapErr(err)
	}
	return blob.Part{Number: n, Size: size, ETag: strings.Trim(p.ETag, `"`)}, nil
}

// Parts implements blob.Multipart.
func (d *Driver) Parts(ctx context.Context, key, id string) ([]blob.Part, error) {
	var ps []blob.Part
	for marker := 0; ; {
		res, err := d.core().ListObjectParts(ctx, d.bucket, key, id, marker, 1000)
		if err != nil {
			return nil, mapErr(err)
		}
		for _, p := range res.ObjectParts {
			ps = append(ps, blob.Part{Number: p.PartNumber, Size: p.Size, ETag: strings.Trim(p.ETag, `"`)})
		}
		if !res.IsTruncated {
			return ps, nil
		}
		marker = res.NextPartNumberMarker
	}
}

// Complete implements blob.Multipart.
func (d *Driver) Complete(ctx context.Context, key, id string, parts []blob.Part) (blob.Attrs, error) {
	cps := make([]minio.CompletePart, len(parts))
	for i, p := range parts {
		if i > 0 && p.Number <= parts[i-1].Number {
			return blob.Attrs{}, coffer.Errorf(coffer.EINVALID, "parts out of order")
		}
		cps[i] = minio.CompletePart{PartNumber: p.Number, ETag: p.ETag}
	}
	if len(parts) == 0 {
		return blob.Attrs{}, coffer.Errorf(coffer.EINVALID, "no parts to complete the upload with")
	}
	if _, err := d.core().CompleteMultipartUpload(ctx, d.bucket, key, id, cps, minio.PutObjectOptions{}); err != nil {
		return blob.Attrs{}, mapErr(err)
	}
	return d.Stat(ctx, key)
}

// Abort implements blob.Multipart.
func (d *Driver) Abort(ctx context.Context, key, id string) error {
	err := mapErr(d.core().AbortMultipartUpload(ctx, d.bucket, key, id))
	if coffer.ErrorCode(err) == coffer.ENOTFOUND {
		return nil
	}
	return err
}

// Uploads implements blob.Multipart.
func (d *Driver) Uploads(ctx context.Context, fn func(blob.Upload) error) error {
	var keyMarker, idMarker string
	for {
		res, err := d.core().ListMultipartUploads(ctx, d.bucket, "", keyMarker, idMarker, "", 1000)
		if err != nil {
			return mapErr(err)
		}
		for _, u := range res.Uploads {
			if err := fn(blob.Upload{Key: u.Key, ID: u.UploadID, Created: u.Initiated.UTC()}); err != nil {
				return err
			}
		}
		if !res.IsTruncated {
			return nil
		}
		keyMarker, idMarker = res.NextKeyMarker, res.NextUploadIDMarker
	}
}

// spool copies r to a temp file, positioned at 0, and returns it and its length.
func spool(ctx context.Context, r io.Reader) (*os.File, int64, error) {
	f, err := os.CreateTemp("", "coffer-s3part-*")
	if err != nil {
		return nil, 0, err
	}
	n, err := io.Copy(f, blob.ContextReader(ctx, r))
	if err == nil {
		_, err = f.Seek(0, io.SeekStart)
	}
	if err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, 0, err
	}
	return f, n, nil
}

// exactReader yields r's bytes and fails, before the last declared byte leaves, if r
// has more or fewer than declared; err keeps the failure (or r's own), which
// minio-go's wrapping would hide.
type exactReader struct {
	r    io.Reader
	left int64
	err  error
}

func (e *exactReader) Read(p []byte) (int, error) {
	if e.left <= 0 {
		return 0, io.EOF
	}
	p = p[:min(int64(len(p)), e.left)]
	n, err := e.r.Read(p)
	e.left -= int64(n)
	switch {
	case err == io.EOF && e.left > 0:
		e.err = coffer.Errorf(coffer.EINVALID, "part is shorter than the declared size")
	case err != nil && err != io.EOF:
		e.err = err
	case e.left == 0:
		var one [1]byte
		if m, _ := io.ReadFull(e.r, one[:]); m > 0 {
			e.err = coffer.Errorf(coffer.EINVALID, "part is longer than the declared size")
		}
	}
	if e.err != nil {
		return 0, e.err
	}
	return n, nil
}
