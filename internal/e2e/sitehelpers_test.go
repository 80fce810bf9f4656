package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coffer/coffer/webhook"
	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// hookSink is a purge webhook receiver on 127.0.0.1: it keeps the paths of every
// notification whose signature checks.
type hookSink struct {
	srv   *httptest.Server
	mu    sync.Mutex
	paths []string
	bad   int
}

// newHookSink starts a receiver checking signatures with the test's hook secret.
func newHookSink(t *testing.T) *hookSink {
	h := &hookSink{}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var n struct{ Paths []string }
		h.mu.Lock()
		defer h.mu.Unlock()
		if webhook.Verify("purge-hook-secret-0123456789", r.Header.Get(webhook.SignatureHeader), body, time.Now(), time.Minute) != nil ||
			json.Unmarshal(body, &n) != nil {
			h.bad++
			w.WriteHeader(400)
			return
		}
		h.paths = append(h.paths, n.Paths...)
	}))
	t.Cleanup(h.srv.Close)
	return h
}

// wait waits until a signed notification named path, and that none was refused.
func (h *hookSink) wait(t *testing.T, path string) {
	t.Helper()
	until(t, "the purge webhook for "+path, func() bool {
		h.mu.Lock()
		defer h.mu.Unlock()
		return slices.Contains(h.paths, path)
	})
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.bad > 0 {
		t.Fatalf("%d purge notifications without a valid signature", h.bad)
	}
}

// s3Origin makes a fresh bucket on the test S3 server holding objects, and returns
// its name.
func s3Origin(t *testing.T, objects map[string]string) string {
	t.Helper()
	u, err := url.Parse(os.Getenv("COFFER_TEST_S3_ENDPOINT"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := minio.New(u.Host, &minio.Options{Secure: u.Scheme == "https", BucketLookup: minio.BucketLookupPath,
		Creds: credentials.NewStaticV4(os.Getenv("COFFER_TEST_S3_ACCESS_KEY"), os.Getenv("COFFER_TEST_S3_SECRET_KEY"), "")})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	name := fmt.Sprintf("site-origin-%d", os.Getpid())
	if err := c.MakeBucket(ctx, name, minio.MakeBucketOptions{Region: "us-east-1"}); err != nil {
		if ok, _ := c.BucketExists(ctx, name); !ok {
			t.Fatal(err)
		}
	}
	for k, v := range objects {
		if _, err := c.PutObject(ctx, name, k, strings.NewReader(v), int64(len(v)), minio.PutObjectOptions{ContentType: "image/svg+xml"}); err != nil {
			t.Fatal(err)
		}
	}
	return name
}
