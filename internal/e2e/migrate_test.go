package e2e

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/coffer/coffer/internal/pgtest"
)

// TestMigrateThenServe runs `coffer migrate` on an empty database, SQLite and
// PostgreSQL (COFFER_TEST_DATABASE_URL), then starts `coffer serve` on the same
// database and uploads and downloads a file through it.
func TestMigrateThenServe(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		testMigrateThenServe(t, []string{"COFFER_DATA_DIR=" + t.TempDir()})
	})
	t.Run("postgres", func(t *testing.T) {
		url := pgtest.FreshSchema(t, pgtest.DatabaseURL(t))
		testMigrateThenServe(t, []string{"COFFER_DATABASE_URL=" + url, "COFFER_DATA_DIR=" + t.TempDir()})
	})
}

func testMigrateThenServe(t *testing.T, env []string) {
	migrate := func() {
		t.Helper()
		cmd := exec.Command(binary, "migrate")
		cmd.Env = append(append(os.Environ(), "COFFER_LOG_LEVEL=warn"), env...)
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "migrations applied") {
			t.Fatalf("coffer migrate: %v\n%s", err, out)
		}
	}
	migrate()
	migrate() // a second run finds nothing to do and succeeds too
	p := start(t, env...)
	f, err := p.uploadStream(context.Background(), "migrated.bin", newGen(300<<10, 5))
	if err != nil {
		t.Fatal(err)
	}
	if etag, n := p.downloadMD5(f.ID); etag != f.ETag || n != f.Size {
		t.Fatalf("download %s/%d, want %s/%d", etag, n, f.ETag, f.Size)
	}
}
