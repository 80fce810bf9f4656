package postgres

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/meta"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Store is the PostgreSQL metadata store. It is safe for concurrent use.
type Store struct {
	pool *pgxpool.Pool
	// onEvent runs after a transaction that stored a webhook event commits.
	onEvent atomic.Pointer[func()]
}

var _ meta.Store = (*Store)(nil)

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
	return &Store{pool: pool}, nil
}

// Ping checks the connection.
func (s *Store) Ping(ctx context.Context) error {
	return dbErr(s.pool.Ping(ctx), "ping postgres")
}

// Close closes the pool.
func (s *Store) Close() error {
	s.pool.Close()
	return nil
}

// tx runs fn in a transaction (READ COMMITTED; rows that are read and then written are
// locked with FOR UPDATE) and commits it when fn returns nil.
func (s *Store) tx(ctx context.Context, what string, fn func(pgx.Tx) error) error {
	return dbErr(pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{}, fn), what)
}

// querier is what both the pool and a transaction offer.
type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// PostgreSQL error codes mapped to domain errors.
const (
	uniqueViolation     = "23505"
	foreignKeyViolation = "23503"
)

func pgCode(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

// dbErr maps err to a *coffer.Error: domain errors pass through, constraint violations
// become ECONFLICT or ENOTFOUND, text PostgreSQL cannot store (NUL, invalid UTF-8)
// EINVALID, anything else EINTERNAL.
func dbErr(err error, what string) error {
	var ce *coffer.Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ce):
		return err
	case errors.Is(err, pgx.ErrNoRows):
		return coffer.Errorf(coffer.ENOTFOUND, "%s: not found", what)
	}
	switch pgCode(err) {
	case uniqueViolation:
		return coffer.Errorf(coffer.ECONFLICT, "%s: already exists", what)
	case foreignKeyViolation:
		return coffer.Errorf(coffer.ENOTFOUND, "%s: bucket not found", what)
	case "22021", "22P05": // character_not_in_repertoire, untranslatable_character
		return coffer.Errorf(coffer.EINVALID, "%s: text contains characters that cannot be stored", what)
	}
	return coffer.Internal(err, what)
}
