package sqlite

import (
	"context"
	"database/sql"
	"embed"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/meta"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Migrate applies the pending migrations and makes sure the default bucket exists, all
// in one BEGIN IMMEDIATE transaction: processes that start together wait for each
// other (busy_timeout) and the later ones find nothing left to do. Idempotent.
func (s *Store) Migrate(ctx context.Context) error {
	steps, err := meta.LoadMigrations(migrations, "migrations")
	if err != nil {
		return coffer.Internal(err, "load migrations")
	}
	return s.write(ctx, "migrate sqlite", func(tx *sql.Tx) error {
		const ddl = `CREATE TABLE IF NOT EXISTS schema_migrations (
			version INTEGER NOT NULL PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL) STRICT`
		if _, err := tx.ExecContext(ctx, ddl); err != nil {
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

func appliedVersions(ctx context.Context, tx *sql.Tx) (map[int]bool, error) {
	rows, err := tx.QueryContext(ctx, `SELECT version FROM schema_migrations`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	done := map[int]bool{}
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		done[v] = true
	}
	return done, rows.Err()
}

func apply(ctx context.Context, tx *sql.Tx, m meta.Migration) error {
	if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
		return coffer.Internal(err, "migration "+m.Name)
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`,
		m.Version, m.Name, micros(meta.Now()))
	return err
}

func insertDefaultBucket(ctx context.Context, tx *sql.Tx) error {
	b := coffer.NewBucket(coffer.DefaultBucketID)
	b.CreatedAt = meta.Now()
	b.UpdatedAt = b.CreatedAt
	_, err := tx.ExecContext(ctx, insertBucket+` ON CONFLICT (id) DO NOTHING`, bucketArgs(b)...)
	return err
}
