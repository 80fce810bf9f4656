package edge

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/site"
)

// S3Origin fetches keys from an S3 bucket with its own credentials: key k is
// object Prefix+k.
type S3Origin struct {
	c       *minio.Client
	bucket  string
	prefix  string
	timeout time.Duration
	id      string
}

var _ site.Origin = (*S3Origin)(nil)

// NewS3Origin returns the origin o, signing with secretKey (o.SecretAccessKey is
// sealed in storage; the app passes the opened secret), over transport (nil:
// minio's default; production passes the SSRF-guarded one).
func NewS3Origin(o site.S3Origin, secretKey string, transport http.RoundTripper) (*S3Origin, error) {
	if o.Bucket == "" {
		return nil, coffer.InvalidField("bucket", "an S3 origin needs a bucket")
	}
	host, secure, err := s3Endpoint(o.Endpoint)
	if err != nil {
		return nil, err
	}
	lookup := minio.BucketLookupAuto
	if o.PathStyle {
		lookup = minio.BucketLookupPath
	}
	opts := &minio.Options{Secure: secure, Region: o.Region, BucketLookup: lookup, Transport: transport}
	if o.AccessKeyID != "" {
		opts.Creds = credentials.NewStaticV4(o.AccessKeyID, secretKey, "")
	} else {
		opts.Creds = credentials.NewStatic("", "", "", credentials.SignatureAnonymous)
	}
	c, err := minio.New(host, opts)
	if err != nil {
		return nil, coffer.InvalidField("endpoint", err.Error())
	}
	t := o.Timeout.D()
	if t <= 0 {
		t = defaultOriginTimeout
	}
	return &S3Origin{c: c, bucket: o.Bucket, prefix: o.Prefix, timeout: t, id: s3OriginID(o, secretKey)}, nil
}

// s3Endpoint reads "http(s)://host[:port]" ("" = AWS).
func s3Endpoint(ep string) (host string, secure bool, err error) {
	if ep == "" {
		return "s3.amazonaws.com", true, nil
	}
	u, perr := url.Parse(ep)
	if perr != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") ||
		(u.Path != "" && u.Path != "/") || u.User != nil || u.RawQuery != "" {
		return "", false, coffer.InvalidField("endpoint", "an S3 endpoint is http(s)://host[:port]")
	}
	return u.Host, u.Scheme == "https", nil
}

// s3OriginID names the endpoint, bucket and prefix, with a digest of the
// credentials (so changed credentials are a new origin) that shows neither.
func s3OriginID(o site.S3Origin, secret string) string {
	d := sha256.Sum256([]byte(o.AccessKeyID + "\x00" + secret + "\x00" + o.Region + "\x00" + strconv.FormatBool(o.PathStyle)))
	return "s3:" + o.Endpoint + "/" + o.Bucket + "/" + o.Prefix + "#" + hex.EncodeToString(d[:8])
}

// ID implements site.Origin.
func (o *S3Origin) ID() string { return o.id }

// Fetch implements site.Origin: NoSuchKey is 404; a conditional GET the object
// satisfies is 304; other failures are errors.
func (o *S3Origin) Fetch(ctx context.Context, key, ifNoneMatch string, ifModifiedSince time.Time) (*site.Fetched, error) {
	if err := checkKey(key); err != nil {
		return nil, err
	}
	var opts minio.GetObjectOptions
	if etag := strings.Trim(strings.TrimPrefix(ifNoneMatch, "W/"), `"`); etag != "" {
		opts.SetMatchETagExcept(etag)
	}
	if !ifModifiedSince.IsZero() {
		opts.SetModified(ifModifiedSince)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	w := newWatchdog(o.timeout, cancel)
	obj, err := o.c.GetObject(ctx, o.bucket, o.prefix+strings.TrimPrefix(key, "/"), opts)
	var st minio.ObjectInfo
	if err == nil {
		st, err = obj.Stat()
	}
	if err != nil {
		if obj != nil {
			obj.Close()
		}
		w.stop()
		return s3Failure(err, context.Cause(ctx))
	}
	w.reset()
	return &site.Fetched{
		Status: http.StatusOK, Header: s3Header(st), Size: st.Size,
		Body: &watchedBody{rc: obj, w: w, ctx: ctx},
	}, nil
}

// s3Failure maps a GetObject error: 404 and 304 are answers, the rest errors.
func s3Failure(err, cause error) (*site.Fetched, error) {
	r := minio.ToErrorResponse(err)
	switch {
	case r.Code == minio.NoSuchKey || r.StatusCode == http.StatusNotFound && r.Code != minio.NoSuchBucket:
		return &site.Fetched{Status: http.StatusNotFound, Header: http.Header{}}, nil
	case r.StatusCode == http.StatusNotModified:
		return &site.Fetched{Status: http.StatusNotModified, Header: http.Header{}}, nil
	}
	if cause != nil && errors.Is(cause, errStalled) {
		return nil, cause
	}
	return nil, err
}

// s3Header gives an S3 object's metadata the headers an HTTP origin would send.
func s3Header(st minio.ObjectInfo) http.Header {
	h := http.Header{}
	if st.ETag != "" {
		h.Set("ETag", `"`+strings.Trim(st.ETag, `"`)+`"`)
	}
	if !st.LastModified.IsZero() {
		h.Set("Last-Modified", st.LastModified.UTC().Format(http.TimeFormat))
	}
	for _, k := range []string{"Content-Type", "Cache-Control", "Surrogate-Key"} {
		if v := st.Metadata.Get(k); v != "" {
			h.Set(k, v)
		}
	}
	if v := contentEncoding(st.Metadata.Get("Content-Encoding")); v != "" {
		h.Set("Content-Encoding", v)
	}
	if v := st.UserMetadata["Surrogate-Key"]; v != "" && h.Get("Surrogate-Key") == "" {
		h.Set("Surrogate-Key", v)
	}
	if h.Get("Content-Type") == "" && st.ContentType != "" {
		h.Set("Content-Type", st.ContentType)
	}
	return h
}

// contentEncoding drops "aws-chunked", the upload's transfer framing some S3
// servers keep in an object's Content-Encoding: the stored bytes are not in it.
func contentEncoding(v string) string {
	var out []string
	for _, e := range strings.Split(v, ",") {
		if e = strings.TrimSpace(e); e != "" && !strings.EqualFold(e, "aws-chunked") {
			out = append(out, e)
		}
	}
	return strings.Join(out, ", ")
}

var _ io.ReadCloser = (*minio.Object)(nil)
