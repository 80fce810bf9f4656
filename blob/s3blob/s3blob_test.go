package s3blob_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"

	"github.com/coffer/coffer/blob"
	"github.com/coffer/coffer/blob/blobtest"
	"github.com/coffer/coffer/blob/s3blob"
)

// newDriver connects to the S3 server the test scripts start, in a fresh bucket.
func newDriver(tb testing.TB) *s3blob.Driver {
	tb.Helper()
	d := openBucket(tb, freshBucket())
	tb.Cleanup(func() { emptyBucket(d) })
	return d
}

// freshBucket returns a bucket name no other test uses.
func freshBucket() string {
	var r [6]byte
	rand.Read(r[:])
	return "coffer-test-" + hex.EncodeToString(r[:])
}

// openBucket connects to the S3 server the test scripts start, in bucket (made if
// missing).
func openBucket(tb testing.TB, bucket string) *s3blob.Driver {
	tb.Helper()
	ep := os.Getenv("COFFER_TEST_S3_ENDPOINT")
	if ep == "" {
		if os.Getenv("COFFER_TEST_REQUIRE_SERVICES") == "1" {
			tb.Fatal("COFFER_TEST_S3_ENDPOINT is required")
		}
		tb.Skip("no S3 test server (run scripts/test.sh)")
	}
	cfg := s3blob.DefaultConfig()
	cfg.Endpoint, cfg.Bucket = ep, bucket
	cfg.AccessKey, cfg.SecretKey = os.Getenv("COFFER_TEST_S3_ACCESS_KEY"), os.Getenv("COFFER_TEST_S3_SECRET_KEY")
	cfg.PartSize = 5 << 20 // several parts in the large test
	d, err := s3blob.New(context.Background(), cfg)
	if err != nil {
		tb.Fatal(err)
	}
	return d
}

func emptyBucket(d *s3blob.Driver) {
	ctx := context.Background()
	var keys []string
	d.List(ctx, "", func(a blob.Attrs) error { keys = append(keys, a.Key); return nil })
	for _, k := range keys {
		d.Delete(ctx, k)
	}
}

func TestConformance(t *testing.T) {
	blobtest.Run(t, func(t *testing.T) blob.Driver { return newDriver(t) }, blobtest.Known{
		Test: "ConcurrentSiblings",
		Reason: "versitygw's posix backend (the test S3 server) races on parent directories: a delete " +
			"that empties one can make a concurrent put of a sibling fail with \"Existing Object is a " +
			"directory\"; AWS S3 and MinIO have no directories to race on",
	})
}

// TestReopen reopens drivers over one bucket.
func TestReopen(t *testing.T) {
	blobtest.RunReopen(t, func(t *testing.T) func() blob.Driver {
		bucket := freshBucket()
		t.Cleanup(func() { emptyBucket(openBucket(t, bucket)) })
		return func() blob.Driver { return openBucket(t, bucket) }
	})
}

func TestConfigValidate(t *testing.T) {
	for _, c := range []s3blob.Config{{}, {Endpoint: "x"}, {Endpoint: "x", Bucket: "b"}} {
		if c.Validate() == nil {
			t.Errorf("%+v accepted", c)
		}
	}
	if _, err := s3blob.New(context.Background(), s3blob.Config{Endpoint: "ftp://x", Bucket: "b", PartSize: 5 << 20}); err == nil {
		t.Error("ftp endpoint accepted")
	}
}

func BenchmarkDriver(b *testing.B) {
	blobtest.Bench(b, func(b *testing.B) blob.Driver { return newDriver(b) })
}
