package postgres

import (
	"context"
	"embed"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/meta"
	"github.com/jackc/pgx/v5"
)

//go:embed migrations/*.sql
var migrations embed.FS

// migrateLock is the advisory lock key held while migrating ("coffer" in ASCII).
const migrateLock int64 = 0x636f66666572

// Migrate applies the pending migrations and makes sure the default bucket exists, in
// one transaction holding pg_advisory_xact_lock: processes that start together wait
// for each other and the later ones find nothing left to do. Idempotent.
func (s *Store) Migrate(ctx context.Context) error {
	steps, err := meta.LoadMigrations(migrations, "migrations")
	if err != nil {
		return coffer.Internal(err, "load migrations")
	}
	return s.tx(ctx, "migrate postgres", func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, migrateLock); err != nil {
			return err
		}
		const ddl = `CREATE TABLE IF NOT EXISTS schema_migrations (
			version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL)`
		if _, err := tx.Exec(ctx, ddl); err != nil {
			return err
		}
		done, err := appliedVersions(ctx, tx)
		if err != nil {
			return err
		}
		for _, m := range steps {
			if done[m.Version] {
				continue
			}
			if err := apply(ctx, tx, m); err != nil {
				return err
			}
		}
		return insertDefaultBucket(ctx, tx)
	})
}

func appliedVersions(ctx context.Context, tx pgx.Tx) (map[int]bool, error) {
	rows, err := tx.Query(ctx, `SELECT version FROM schema_migrations`)
	if err != nil {
		return nil, err
	}
	versions, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		return nil, err
	}
	done := map[int]bool{}
	for _, v := range versions {
		done[int(v)] = true
	}
	return done, nil
}

func apply(ctx context.Context, tx pgx.Tx, m meta.Migration) error {
	if _, err := tx.Exec(ctx, m.SQL); err != nil { // no arguments: simple protocol, many statements
		return coffer.Internal(err, "migration "+m.Name)
	}
	_, err := tx.Exec(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)`,
		m.Version, m.Name, meta.Now())
	return err
}

func insertDefaultBucket(ctx context.Context, tx pgx.Tx) error {
	b := coffer.NewBucket(coffer.DefaultBucketID)
	b.CreatedAt = meta.Now()
	b.UpdatedAt = b.CreatedAt
	_, err := tx.Exec(ctx, insertBucket+` ON CONFLICT (id) DO NOTHING`, bucketArgs(b)...)
	return err
}
