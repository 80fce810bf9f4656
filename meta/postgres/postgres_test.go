package postgres_test

import (
	"strings"
	"testing"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/internal/pgtest"
	"github.com/coffer/coffer/meta"
	"github.com/coffer/coffer/meta/metatest"
	"github.com/coffer/coffer/meta/postgres"
)

var (
	databaseURL = pgtest.DatabaseURL
	freshSchema = pgtest.FreshSchema
)

func open(t *testing.T, u string) *postgres.Store { return metatest.Open(t, postgres.Open, u) }

func TestConformance(t *testing.T) {
	base := databaseURL(t)
	metatest.Run(t, func(t *testing.T) meta.Store {
		return metatest.Migrated(t, open(t, freshSchema(t, base)))
	})
}

// migrated opens and migrates a store in a fresh schema of base.
func migrated(t *testing.T, base string) *postgres.Store {
	s := open(t, freshSchema(t, base))
	metatest.Migrated(t, s)
	return s
}

func TestTenants(t *testing.T) {
	base := databaseURL(t)
	metatest.RunTenants(t, func(t *testing.T) metatest.Shared { return migrated(t, base) })
}

func TestMigrateConcurrent(t *testing.T) {
	u := freshSchema(t, databaseURL(t))
	metatest.RunMigrate(t, func(t *testing.T) metatest.Migrator { return open(t, u) })
}

func TestNamesUpgrade(t *testing.T) {
	u := freshSchema(t, databaseURL(t))
	metatest.RunNamesUpgrade(t, func(t *testing.T) metatest.Migrator { return open(t, u) },
		func(t *testing.T) {
			pgtest.Exec(t, u, `DROP INDEX files_bucket_named; ALTER TABLE files DROP COLUMN named;
				DELETE FROM schema_migrations WHERE version = 8`)
		})
}

// BenchmarkUploadWrites runs metatest.BenchUploadWrites with pools of 4 connections
// (pgxpool's default on this 2-CPU machine) and of Open's default:
//
//	go test -run '^$' -bench UploadWrites -benchtime 3000x ./meta/postgres/
func BenchmarkUploadWrites(b *testing.B) {
	base := databaseURL(b)
	for _, pool := range []string{"pool_max_conns=4", ""} {
		name := pool
		if name == "" {
			name = "default"
		}
		b.Run(name, func(b *testing.B) { metatest.BenchUploadWrites(b, openBench(b, base, pool)) })
	}
}

// BenchmarkListPage runs metatest.BenchListPage (a page of 100 entries with a
// delimiter, of a bucket of 100,000 files):
//
//	go test -run '^$' -bench ListPage -benchtime 200x ./meta/postgres/
func BenchmarkListPage(b *testing.B) {
	metatest.BenchListPage(b, openBench(b, databaseURL(b), ""))
}

// openBench opens and migrates a store in a fresh schema of base, with pool settings
// pool ("" for Open's defaults); it is closed when b ends.
func openBench(b *testing.B, base, pool string) *postgres.Store {
	u := freshSchema(b, base)
	if pool != "" {
		u += map[bool]string{true: "&", false: "?"}[strings.Contains(u, "?")] + pool
	}
	s, err := postgres.Open(b.Context(), u)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close() })
	if err := s.Migrate(b.Context()); err != nil {
		b.Fatal(err)
	}
	return s
}

// BenchmarkUploadWritesTenant runs metatest.BenchUploadWritesTenant with a pool of 4
// connections on a tenant without a quota (its usage spread over shards) and on one
// with a quota (its commits take turns on its usage row):
//
//	go test -run '^$' -bench UploadWritesTenant -benchtime 3000x ./meta/postgres/
func BenchmarkUploadWritesTenant(b *testing.B) {
	base := databaseURL(b)
	for _, bc := range []struct {
		name  string
		quota coffer.Quota
	}{{"none", coffer.Quota{}}, {"quota", coffer.Quota{MaxBytes: 1 << 40}}} {
		b.Run(bc.name, func(b *testing.B) {
			metatest.BenchUploadWritesTenant(b, openBench(b, base, "pool_max_conns=4"), bc.quota)
		})
	}
}

func TestSites(t *testing.T) {
	base := databaseURL(t)
	metatest.RunSites(t, func(t *testing.T) metatest.SiteStore { return migrated(t, base) })
}
