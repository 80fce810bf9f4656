package edge

import (
	"context"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/site"
)

// s3Test returns the test S3 server's origin config over a fresh bucket holding
// prefix/hello.txt, skipping without a server (source scripts/test-services.sh).
func s3Test(t *testing.T) site.S3Origin {
	ep := os.Getenv("COFFER_TEST_S3_ENDPOINT")
	if ep == "" {
		if os.Getenv("COFFER_TEST_REQUIRE_SERVICES") == "1" {
			t.Fatal("COFFER_TEST_S3_ENDPOINT is required")
		}
		t.Skip("no S3 server: source scripts/test-services.sh")
	}
	o := site.S3Origin{
		Endpoint: ep, Region: "us-east-1", Bucket: "edge-" + strings.ToLower(coffer.NewFileID()[:8]),
		Prefix: "site/", AccessKeyID: os.Getenv("COFFER_TEST_S3_ACCESS_KEY"), PathStyle: true,
	}
	c, err := minio.New(strings.TrimPrefix(ep, "http://"), &minio.Options{
		Creds:        credentials.NewStaticV4(o.AccessKeyID, os.Getenv("COFFER_TEST_S3_SECRET_KEY"), ""),
		BucketLookup: minio.BucketLookupPath, Region: o.Region,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := c.MakeBucket(ctx, o.Bucket, minio.MakeBucketOptions{Region: o.Region}); err != nil {
		t.Fatal(err)
	}
	_, err = c.PutObject(ctx, o.Bucket, "site/hello.txt", strings.NewReader("hello s3"), 8, minio.PutObjectOptions{
		ContentType: "text/plain", CacheControl: "max-age=30", UserMetadata: map[string]string{"Surrogate-Key": "greet"},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c.RemoveObject(ctx, o.Bucket, "site/hello.txt", minio.RemoveObjectOptions{})
		c.RemoveBucket(ctx, o.Bucket)
	})
	return o
}

func TestS3OriginFetch(t *testing.T) {
	cfg := s3Test(t)
	o, err := NewS3Origin(cfg, os.Getenv("COFFER_TEST_S3_SECRET_KEY"), http.DefaultTransport)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	f, err := o.Fetch(ctx, "/hello.txt", "", time.Time{})
	if err != nil || f.Status != 200 || f.Size != 8 {
		t.Fatalf("fetch: %+v %v", f, err)
	}
	b, err := io.ReadAll(f.Body)
	f.Body.Close()
	if err != nil || string(b) != "hello s3" || f.Header.Get("Content-Type") != "text/plain" ||
		f.Header.Get("Cache-Control") != "max-age=30" || f.Header.Get("Surrogate-Key") != "greet" {
		t.Fatalf("body %q %v, header %v", b, err, f.Header)
	}
	etag := f.Header.Get("ETag")
	if nm, err := o.Fetch(ctx, "/hello.txt", etag, time.Time{}); err != nil || nm.Status != 304 {
		t.Fatalf("If-None-Match %s: %+v %v", etag, nm, err)
	}
	// versitygw v1.8 ignores If-Modified-Since on GET (it answers 200): check the
	// header goes out, and that a 304 would be read as one (s3Failure below).
	lm, _ := http.ParseTime(f.Header.Get("Last-Modified"))
	var rec recorder
	ims, _ := NewS3Origin(cfg, os.Getenv("COFFER_TEST_S3_SECRET_KEY"), &rec)
	if f, err := ims.Fetch(ctx, "/hello.txt", "", lm); err != nil {
		t.Fatal(err)
	} else if f.Body != nil {
		f.Body.Close()
	}
	if got := rec.last.Get("If-Modified-Since"); got != lm.UTC().Format(http.TimeFormat) {
		t.Fatalf("If-Modified-Since sent %q", got)
	}
	if f.Header.Get("Content-Encoding") != "" {
		t.Fatalf("Content-Encoding %q (the S3 upload's aws-chunked must not leak)", f.Header.Get("Content-Encoding"))
	}
	if f, err := o.Fetch(ctx, "/hello.txt", `"other"`, time.Time{}); err != nil || f.Status != 200 {
		t.Fatalf("a changed ETag: %+v %v", f, err)
	} else {
		f.Body.Close()
	}
	if nf, err := o.Fetch(ctx, "/missing.txt", "", time.Time{}); err != nil || nf.Status != 404 {
		t.Fatalf("missing: %+v %v", nf, err)
	}
	bad, _ := NewS3Origin(cfg, "wrong-secret", nil)
	if _, err := bad.Fetch(ctx, "/hello.txt", "", time.Time{}); err == nil {
		t.Fatal("a wrong secret fetched")
	}
	if bad.ID() == o.ID() {
		t.Fatal("credentials do not change the ID")
	}
}

func TestS3OriginThroughTheCache(t *testing.T) {
	var clk clock
	cfg := s3Test(t)
	o, err := NewS3Origin(cfg, os.Getenv("COFFER_TEST_S3_SECRET_KEY"), nil)
	if err != nil {
		t.Fatal(err)
	}
	c := newCache(t, clk.config(t.TempDir()))
	req := request(o, "/hello.txt")
	mustGet(t, c, req, "hello s3", site.CacheMiss)
	mustGet(t, c, req, "hello s3", site.CacheHit)
	clk.advance(31*time.Second + 60*time.Second) // past max-age and the default SWR
	mustGet(t, c, req, "hello s3", site.CacheRevalidated)
	_, _, err = get(t, c, request(o, "/nope.txt"))
	wantCode(t, err, coffer.ENOTFOUND)
	if n := c.Purge("t1/s1", site.Purge{Tags: []string{"greet"}}); n != 1 { // the entry (the 404 has no tags)
		t.Fatalf("purge by the S3 object's Surrogate-Key dropped %d", n)
	}
}

// recorder is a transport keeping the last request's headers.
type recorder struct{ last http.Header }

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	r.last = req.Header.Clone()
	return http.DefaultTransport.RoundTrip(req)
}

func TestS3FailureMapping(t *testing.T) {
	for code, want := range map[int]int{304: 304, 404: 404} {
		f, err := s3Failure(minio.ErrorResponse{StatusCode: code}, nil)
		if err != nil || f.Status != want {
			t.Fatalf("%d: %+v %v", code, f, err)
		}
	}
	if _, err := s3Failure(minio.ErrorResponse{StatusCode: 404, Code: minio.NoSuchBucket}, nil); err == nil {
		t.Fatal("NoSuchBucket is a failure of the origin, not a missing object")
	}
	if _, err := s3Failure(minio.ErrorResponse{StatusCode: 503}, nil); err == nil {
		t.Fatal("503 is a failure")
	}
}
