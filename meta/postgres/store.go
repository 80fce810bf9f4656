package postgres

import (
	"context"
	"embed"
	"errors"
	"strconv"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/meta"
	"github.com/coffer/coffer/meta/internal/sqlcore"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Store is the PostgreSQL metadata store. It is safe for concurrent use. Its methods
// are the shared SQL core's (meta/internal/sqlcore) over this package's dialect:
// transactions are READ COMMITTED and rows that are read and then written are locked
// with FOR UPDATE; Migrate holds pg_advisory_xact_lock, so processes that start
// together wait for each other.
type Store struct {
	*core
	pool *pgxpool.Pool
}

// core is the shared SQL store, embedded under an unexported name.
type core = sqlcore.Store

var (
	_ meta.Store      = (*Store)(nil)
	_ meta.Outbox     = (*Store)(nil)
	_ meta.Rejections = (*Store)(nil)
)

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

// migrateLock is the advisory lock key held while migrating ("coffer" in ASCII).
const migrateLock int64 = 0x636f66666572

// PostgreSQL error codes mapped to domain errors.
const (
	uniqueViolation     = "23505"
	foreignKeyViolation = "23503"
	// text PostgreSQL cannot store: character_not_in_repertoire (NUL, invalid UTF-8),
	// untranslatable_character
	notInRepertoire = "22021"
	untranslatable  = "22P05"
)

func pgCode(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

// newDialect describes PostgreSQL to the shared core.
func newDialect() *sqlcore.Dialect {
	return &sqlcore.Dialect{
		Name:       "postgres",
		Time:       func(t time.Time) any { return t },
		TimeType:   "timestamptz",
		List:       func(l []string) any { return l },
		ListDest:   func(l *[]string) any { return l },
		JSONArg:    "?::text::jsonb",
		JSONText:   func(col string) string { return col + "::text" },
		UUIDArg:    "?::uuid",
		ForUpdate:  " FOR UPDATE",
		KeyShare:   " FOR KEY SHARE",
		Contains:   func(h, n string) string { return "strpos(" + h + ", " + n + ") > 0" },
		HasPrefix:  hasPrefix,
		True:       "TRUE",
		False:      "FALSE",
		Filter:     filterDialect,
		Unique:     func(err error) bool { return pgCode(err) == uniqueViolation },
		ForeignKey: func(err error) bool { return pgCode(err) == foreignKeyViolation },
		Unstorable: func(err error) bool { c := pgCode(err); return c == notInRepertoire || c == untranslatable },
		Migrations: migrations,
		MigrationsTable: `CREATE TABLE IF NOT EXISTS schema_migrations (
			version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL)`,
		MigrateLock: `SELECT pg_advisory_xact_lock(` + strconv.FormatInt(migrateLock, 10) + `)`,
		Claim:       claim,
		Redeliver:   redeliver,
	}
}

// hasPrefix uses starts_with: LIKE would need the prefix escaped.
func hasPrefix(col, prefix string, args *[]any) string {
	*args = append(*args, prefix)
	return "starts_with(" + col + ", ?)"
}
