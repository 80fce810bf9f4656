package sqlcore

import (
	"context"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/meta"
)

// Migrate applies the pending migrations and makes sure the default bucket exists, all
// in one write transaction (after the dialect's MigrateLock): processes that start
// together wait for each other and the later ones find nothing left to do. Idempotent.
func (s *Store) Migrate(ctx context.Context) error {
	steps, err := meta.LoadMigrations(s.d.Migrations, "migrations")
	if err != nil {
		return coffer.Internal(err, "load migrations")
	}
	return s.write(ctx, "migrate "+s.d.Name, func(tx Querier) error {
		if s.d.MigrateLock != "" {
			if _, err := tx.Exec(ctx, s.d.MigrateLock); err != nil {
				return err
			}
		}
		if _, err := tx.Exec(ctx, s.d.MigrationsTable); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT version FROM schema_migrations`)
		versions, err := Collect(rows, err, func(r Row) (v int, err error) { return v, r.Scan(&v) })
		if err != nil {
			return err
		}
		done := map[int]bool{}
		for _, v := range versions {
			done[v] = true
		}
		for _, m := range steps {
			if !done[m.Version] {
				if err := s.apply(ctx, tx, m); err != nil {
					return err
				}
			}
		}
		return s.insertDefaultBucket(ctx, tx)
	})
}

// apply runs migration m and records it.
func (s *Store) apply(ctx context.Context, tx Querier, m meta.Migration) error {
	if _, err := tx.Exec(ctx, m.SQL); err != nil { // no arguments: many statements may run
		return coffer.Internal(err, "migration "+m.Name)
	}
	_, err := tx.Exec(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`,
		m.Version, m.Name, s.d.Time(meta.Now()))
	return err
}

// insertDefaultBucket creates s's tenant's default bucket unless it exists.
func (s *Store) insertDefaultBucket(ctx context.Context, tx Querier) error {
	b := coffer.NewBucket(coffer.DefaultBucketID)
	b.CreatedAt = meta.Now()
	b.UpdatedAt = b.CreatedAt
	_, err := tx.Exec(ctx, insertBucket+` ON CONFLICT (tenant_id, id) DO NOTHING`,
		append([]any{s.tenant}, s.bucketArgs(b)...)...)
	return err
}
