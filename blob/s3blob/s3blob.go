// Package s3blob stores blobs in any S3-compatible object store (AWS S3, MinIO,
// SeaweedFS, Ceph, versitygw) through minio-go v7.
//
// Uploads always pass minio-go a known size or an explicit part size: with size -1 and
// no part size it would buffer up to ~512 MiB per upload. S3 PUTs are atomic and
// durable once acknowledged, so a failed or cancelled upload leaves nothing (an
// abandoned multipart upload is aborted by minio-go; configure a bucket lifecycle rule
// to expire stragglers from crashes). Downloads use ranged GETs. The driver has
// blob.Multipart (multipart.go): S3's own multipart uploads.
package s3blob

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/blob"
	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// Config selects the S3 endpoint and bucket.
type Config struct {
	Endpoint  string // "http://127.0.0.1:9000", "https://s3.amazonaws.com" or "host:port" (https)
	Bucket    string
	Region    string
	AccessKey string
	SecretKey string
	PathStyle bool
	// PartSize is used when the size of an upload is unknown: each part is buffered, so
	// memory per upload is about PartSize.
	PartSize uint64
}

// DefaultConfig returns the defaults.
func DefaultConfig() Config {
	return Config{Region: "us-east-1", PathStyle: true, PartSize: 16 << 20}
}

// Validate checks c.
func (c Config) Validate() error {
	switch {
	case c.Endpoint == "":
		return errors.New("s3blob: endpoint is required")
	case c.Bucket == "":
		return errors.New("s3blob: bucket is required")
	case c.PartSize < 5<<20:
		return errors.New("s3blob: part size must be at least 5 MiB (S3's minimum)")
	}
	return nil
}

// Driver is an S3 blob.Driver.
type Driver struct {
	c        *minio.Client
	bucket   string
	partSize uint64
}

var _ blob.Driver = (*Driver)(nil)

// New connects to the endpoint and creates the bucket if it does not exist.
func New(ctx context.Context, cfg Config) (*Driver, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	host, secure, err := parseEndpoint(cfg.Endpoint)
	if err != nil {
		return nil, err
	}
	lookup := minio.BucketLookupDNS
	if cfg.PathStyle {
		lookup = minio.BucketLookupPath
	}
	c, err := minio.New(host, &minio.Options{
		Creds:        credentials.NewStaticV4(cfg.AccessKey, cfg.SecretKey, ""),
		Secure:       secure,
		Region:       cfg.Region,
		BucketLookup: lookup,
	})
	if err != nil {
		return nil, fmt.Errorf("s3blob: %w", err)
	}
	d := &Driver{c: c, bucket: cfg.Bucket, partSize: cfg.PartSize}
	if err := d.ensureBucket(ctx, cfg.Region); err != nil {
		return nil, err
	}
	return d, nil
}

func parseEndpoint(ep string) (host string, secure bool, err error) {
	if !strings.Contains(ep, "://") {
		return ep, true, nil
	}
	u, err := url.Parse(ep)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return "", false, fmt.Errorf("s3blob: endpoint %q must be http(s)://host[:port]", ep)
	}
	return u.Host, u.Scheme == "https", nil
}

func (d *Driver) ensureBucket(ctx context.Context, region string) error {
	ok, err := d.c.BucketExists(ctx, d.bucket)
	if err != nil {
		return fmt.Errorf("s3blob: checking bucket %q: %w", d.bucket, err)
	}
	if ok {
		return nil
	}
	err = d.c.MakeBucket(ctx, d.bucket, minio.MakeBucketOptions{Region: region})
	if err != nil {
		code := minio.ToErrorResponse(err).Code
		if code != "BucketAlreadyOwnedByYou" && code != "BucketAlreadyExists" {
			return fmt.Errorf("s3blob: creating bucket %q: %w", d.bucket, err)
		}
	}
	return nil
}

// Put implements blob.Driver.
func (d *Driver) Put(ctx context.Context, key string, r io.Reader, size int64) (blob.Attrs, error) {
	cr := &countReader{r: r}
	opts := minio.PutObjectOptions{ContentType: "application/octet-stream"}
	if size < 0 {
		opts.PartSize = d.partSize
	}
	info, err := d.c.PutObject(ctx, d.bucket, key, cr, size, opts)
	if err == nil && size >= 0 && cr.n == size {
		// minio-go stops after size bytes; more data means the declared size was wrong.
		var one [1]byte
		if n, _ := io.ReadFull(r, one[:]); n > 0 {
			cr.n++
		}
	}
	if err == nil && size >= 0 && cr.n != size {
		d.c.RemoveObject(context.WithoutCancel(ctx), d.bucket, key, minio.RemoveObjectOptions{})
		err = coffer.Errorf(coffer.EINVALID, "blob size %d does not match the declared %d", cr.n, size)
	}
	if err != nil {
		if cr.err != nil {
			return blob.Attrs{}, cr.err
		}
		return blob.Attrs{}, err
	}
	return blob.Attrs{Key: key, Size: info.Size, ModTime: info.LastModified.UTC()}, nil
}

// Open implements blob.Driver: the reader issues ranged GETs as it is read and seeked.
func (d *Driver) Open(ctx context.Context, key string) (blob.Reader, error) {
	obj, err := d.c.GetObject(ctx, d.bucket, key, minio.GetObjectOptions{})
	if err != nil {
		return nil, mapErr(err)
	}
	st, err := obj.Stat()
	if err != nil {
		obj.Close()
		return nil, mapErr(err)
	}
	return &reader{Object: obj, attrs: blob.Attrs{Key: key, Size: st.Size, ModTime: st.LastModified.UTC()}}, nil
}

// Stat implements blob.Driver.
func (d *Driver) Stat(ctx context.Context, key string) (blob.Attrs, error) {
	st, err := d.c.StatObject(ctx, d.bucket, key, minio.StatObjectOptions{})
	if err != nil {
		return blob.Attrs{}, mapErr(err)
	}
	return blob.Attrs{Key: key, Size: st.Size, ModTime: st.LastModified.UTC()}, nil
}

// Delete implements blob.Driver.
func (d *Driver) Delete(ctx context.Context, key string) error {
	err := d.c.RemoveObject(ctx, d.bucket, key, minio.RemoveObjectOptions{})
	if err != nil && coffer.ErrorCode(mapErr(err)) == coffer.ENOTFOUND {
		return nil
	}
	return err
}

// List implements blob.Driver.
func (d *Driver) List(ctx context.Context, prefix string, fn func(blob.Attrs) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for obj := range d.c.ListObjects(ctx, d.bucket, minio.ListObjectsOptions{Prefix: prefix, Recursive: true}) {
		if obj.Err != nil {
			return obj.Err
		}
		if strings.HasSuffix(obj.Key, "/") {
			continue
		}
		if err := fn(blob.Attrs{Key: obj.Key, Size: obj.Size, ModTime: obj.LastModified.UTC()}); err != nil {
			return err
		}
	}
	return nil
}

// Close implements blob.Driver.
func (d *Driver) Close() error { return nil }

type reader struct {
	*minio.Object
	attrs blob.Attrs
}

func (r *reader) Attrs() blob.Attrs { return r.attrs }

func mapErr(err error) error {
	switch minio.ToErrorResponse(err).Code {
	case "NoSuchKey", "NotFound":
		return coffer.Errorf(coffer.ENOTFOUND, "blob not found")
	case "NoSuchUpload":
		return coffer.Errorf(coffer.ENOTFOUND, "upload not found")
	case "InvalidPart", "InvalidPartOrder", "EntityTooSmall", "InvalidArgument":
		return coffer.Errorf(coffer.EINVALID, "%s", minio.ToErrorResponse(err).Message)
	}
	return err
}

// countReader counts bytes and remembers the source's own error, so a limit error from
// an upper layer survives minio-go's wrapping.
type countReader struct {
	r   io.Reader
	n   int64
	err error
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	if err != nil && err != io.EOF {
		c.err = err
	}
	return n, err
}
