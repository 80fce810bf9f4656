package postgres

import (
	"context"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/meta/internal/sqlcore"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Store is the PostgreSQL metadata store. It is safe for concurrent use. Its methods
// are the shared SQL core's (meta/internal/sqlcore) over this package's dialect:
// transactions are READ COMMITTED and rows that are read and then written are locked
// with FOR UPDATE; Migrate holds pg_advisory_xact_lock, so processes that start
// together wait for each other.
type Store struct {
	*core
	pool *pgxpool.Pool
}

var _ sqlcore.Engine = (*Store)(nil)

// Open connects to the database at url (a postgres:// URL or key=value DSN; pool
// settings like pool_max_conns are accepted). It does not migrate: call Migrate.
func Open(ctx context.Context, url string) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, coffer.Internal(err, "parse database URL")
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, coffer.Internal(err, "connect to postgres")
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, coffer.Internal(err, "connect to postgres")
	}
	return &Store{core: sqlcore.New(conn{pool}, newDialect()), pool: pool}, nil
}

// Ping checks the connection.
func (s *Store) Ping(ctx context.Context) error {
	return newDialect().Err(s.pool.Ping(ctx), "ping postgres")
}

// Close closes the pool.
func (s *Store) Close() error {
	s.pool.Close()
	return nil
}
