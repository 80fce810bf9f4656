package sqlite_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"

	"github.com/coffer/coffer/meta"
	"github.com/coffer/coffer/meta/metatest"
	"github.com/coffer/coffer/meta/sqlite"
)

func open(t *testing.T, path string) *sqlite.Store { return metatest.Open(t, sqlite.Open, path) }

func TestConformance(t *testing.T) {
	metatest.Run(t, func(t *testing.T) meta.Store {
		return metatest.Migrated(t, open(t, filepath.Join(t.TempDir(), "coffer.db")))
	})
}

// migrated opens and migrates a store in a new file.
func migrated(t *testing.T) *sqlite.Store {
	s := open(t, filepath.Join(t.TempDir(), "coffer.db"))
	metatest.Migrated(t, s)
	return s
}

func TestTenants(t *testing.T) {
	metatest.RunTenants(t, func(t *testing.T) metatest.Shared { return migrated(t) })
}

func TestMigrateConcurrent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "odd ?#% name.db")
	metatest.RunMigrate(t, func(t *testing.T) metatest.Migrator { return open(t, path) })
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("database not created at the literal path: %v", err)
	}
}

func TestNamesUpgrade(t *testing.T) {
	path := filepath.Join(t.TempDir(), "coffer.db")
	metatest.RunNamesUpgrade(t, func(t *testing.T) metatest.Migrator { return open(t, path) },
		func(t *testing.T) {
			db, err := sql.Open("sqlite", path)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			_, err = db.ExecContext(t.Context(), `DROP INDEX files_bucket_named;
				ALTER TABLE files DROP COLUMN named;
				DELETE FROM schema_migrations WHERE version = 5`)
			if err != nil {
				t.Fatal(err)
			}
		})
}

func Example() {
	ctx := context.Background()
	s, err := sqlite.Open(ctx, filepath.Join(os.TempDir(), "example-coffer.db"))
	if err != nil {
		panic(err)
	}
	defer s.Close()
	if err := s.Migrate(ctx); err != nil { // once at start; safe to run concurrently
		panic(err)
	}
}

func TestSites(t *testing.T) {
	metatest.RunSites(t, func(t *testing.T) metatest.SiteStore { return migrated(t) })
}
