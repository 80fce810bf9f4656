package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"
)

// scaleEnv returns the environment for a node on PostgreSQL and S3, with a fresh
// database and bucket, or skips when the test scripts did not start those servers.
func scaleEnv(t *testing.T) []string {
	t.Helper()
	dbURL, s3 := os.Getenv("COFFER_TEST_DATABASE_URL"), os.Getenv("COFFER_TEST_S3_ENDPOINT")
	if dbURL == "" || s3 == "" {
		if os.Getenv("COFFER_TEST_REQUIRE_SERVICES") == "1" {
			t.Fatal("COFFER_TEST_DATABASE_URL and COFFER_TEST_S3_ENDPOINT are required")
		}
		t.Skip("no PostgreSQL/S3 test servers (run scripts/test.sh)")
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	name := fmt.Sprintf("coffer_e2e_%d", os.Getpid())
	conn.Exec(ctx, "DROP DATABASE IF EXISTS "+name)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatal(err)
	}
	cfg, _ := pgx.ParseConfig(dbURL)
	url := fmt.Sprintf("postgres://%s@%s:%d/%s?sslmode=disable", cfg.User, cfg.Host, cfg.Port, name)
	return []string{
		"COFFER_DATABASE_URL=" + url, "COFFER_S3_ENDPOINT=" + s3, "COFFER_S3_BUCKET=coffer-e2e-" + fmt.Sprint(os.Getpid()),
		"COFFER_S3_ACCESS_KEY=" + os.Getenv("COFFER_TEST_S3_ACCESS_KEY"),
		"COFFER_S3_SECRET_KEY=" + os.Getenv("COFFER_TEST_S3_SECRET_KEY"),
	}
}

// TestTwoNodesOnPostgresAndS3 starts two nodes at once on one fresh database (the
// migrations must tolerate that), uploads through one and reads through the other.
func TestTwoNodesOnPostgresAndS3(t *testing.T) {
	env := scaleEnv(t)
	a, b := launch(t, append(env, "COFFER_DATA_DIR="+t.TempDir())...), launch(t, append(env, "COFFER_DATA_DIR="+t.TempDir())...)
	a.waitHealthy()
	b.waitHealthy()
	f, err := a.uploadStream(context.Background(), "scale/a.bin", newGen(3<<20, 7))
	if err != nil {
		t.Fatal(err)
	}
	if etag, n := b.downloadMD5(f.ID); etag != f.ETag || n != f.Size {
		t.Fatalf("node B read %s/%d, want %s/%d", etag, n, f.ETag, f.Size)
	}
	resp, err := b.request(context.Background(), "GET", "/v1/files/"+f.ID, nil, "Range", "bytes=1000-1999")
	if err != nil || resp.StatusCode != http.StatusPartialContent || resp.ContentLength != 1000 {
		t.Fatalf("range on S3: %v %+v", err, resp)
	}
	resp.Body.Close()
	resp, err = b.request(context.Background(), "DELETE", "/v1/files/"+f.ID, nil)
	if err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("delete via B: %v %+v", err, resp)
	}
	resp.Body.Close()
	resp, _ = a.request(context.Background(), "GET", "/v1/files/"+f.ID, nil)
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("node A still serves a deleted file: %d", resp.StatusCode)
	}
	resp.Body.Close()
	var orphans struct{ Files []string }
	a.postJSON("/v1/ops/list-orphans", &orphans)
	if len(orphans.Files) != 0 {
		t.Fatalf("orphans on S3: %v", orphans.Files)
	}
}
