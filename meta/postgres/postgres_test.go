package postgres_test

import (
	"testing"

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
