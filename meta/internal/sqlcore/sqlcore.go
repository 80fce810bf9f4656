// Package sqlcore is the one implementation of meta.Store (and meta.Outbox,
// meta.Rejections) over SQL that meta/sqlite and meta/postgres share. The engines differ
// only in what a Dialect describes: how a connection and a transaction are run (DB),
// how timestamps, string lists and JSON are stored, which errors are constraint
// violations, a few SQL spellings, and the two webhook queries that use engine-specific
// locking. Queries are written with ? placeholders; a DB whose engine numbers them
// ($1, $2...) rewrites them (see Rebind).
package sqlcore

import (
	"context"
	"database/sql"
	"errors"
	"sync/atomic"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/meta"
)

// Row is one result row (database/sql's *sql.Row and pgx.Row both are).
type Row interface {
	// Scan copies the row's columns into dest; an error wrapping sql.ErrNoRows if
	// there was no row.
	Scan(dest ...any) error
}

// Rows is a result set being read.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close()
}

// Querier runs statements, on a pool or inside a transaction.
type Querier interface {
	// Exec runs a statement and returns how many rows it changed.
	Exec(ctx context.Context, query string, args ...any) (int64, error)
	// Query runs a statement that returns rows.
	Query(ctx context.Context, query string, args ...any) (Rows, error)
	// QueryRow runs a statement that returns at most one row.
	QueryRow(ctx context.Context, query string, args ...any) Row
}

// DB is a connection pool: reads run on it directly, writes through Tx or Write so
// that the engine can serialise them as it needs.
type DB interface {
	Querier
	// Tx runs fn in a write transaction and commits it when fn returns nil; it returns
	// fn's or the commit's error unmapped.
	Tx(ctx context.Context, fn func(Querier) error) error
	// Write runs one writing statement outside an explicit transaction and returns how
	// many rows it changed.
	Write(ctx context.Context, query string, args ...any) (int64, error)
	// Ping checks the connection.
	Ping(ctx context.Context) error
}

// Store implements meta.Store, meta.Outbox, meta.Rejections, meta.Usage, meta.Sites,
// meta.Tenants and meta.SiteRegistry over db in dialect d, for one tenant: every statement binds tenant_id
// (New's store is the default tenant's; ForTenant returns another tenant's view over the
// same connections). It is safe for concurrent use. Ping and Close are the engine
// package's.
type Store struct {
	*shared
	// tenant is the tenant whose rows this store reads and writes.
	tenant string
}

// shared is what every tenant's view of one database shares.
type shared struct {
	db DB
	d  *Dialect
	// fileCols is fileCols(d), built once.
	fileCols string
	// rowWriter is db when the dialect has WritableCTE and db is a RowWriter: an
	// upload of one file then commits in one statement (createOneQ, built once).
	rowWriter  RowWriter
	createOneQ string
	// onEvent runs after a transaction that stored a webhook event commits.
	onEvent atomic.Pointer[func()]
}

// New returns a Store over db in dialect d (see Dialect for what must be set).
func New(db DB, d *Dialect) *Store {
	s := &Store{shared: &shared{db: db, d: d, fileCols: fileCols(d)}, tenant: coffer.DefaultTenantID}
	if rw, ok := db.(RowWriter); ok && d.WritableCTE {
		s.rowWriter, s.createOneQ = rw, s.createOneSQL()
	}
	return s
}

// write runs fn in a transaction and maps its error.
func (s *Store) write(ctx context.Context, what string, fn func(Querier) error) error {
	return s.err(s.db.Tx(ctx, fn), what)
}

// Err maps err to a *coffer.Error: domain errors pass through, no row is ENOTFOUND,
// unique violations ECONFLICT, foreign key violations ENOTFOUND (a missing bucket),
// text the engine cannot store EINVALID, a change refused by a tenant's quota
// EQUOTA (with the database's message), anything else EINTERNAL.
func (d *Dialect) Err(err error, what string) error {
	var ce *coffer.Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ce):
		return err
	case errors.Is(err, sql.ErrNoRows):
		return coffer.Errorf(coffer.ENOTFOUND, "%s: not found", what)
	case d.Unique(err):
		return coffer.Errorf(coffer.ECONFLICT, "%s: already exists", what)
	case d.ForeignKey(err):
		return coffer.Errorf(coffer.ENOTFOUND, "%s: bucket not found", what)
	case d.Quota(err) != "":
		return coffer.Errorf(coffer.EQUOTA, "%s", d.Quota(err))
	case d.Unstorable(err):
		return coffer.Errorf(coffer.EINVALID, "%s: text contains characters that cannot be stored", what)
	}
	return coffer.Internal(err, what)
}

// err maps err as the dialect does.
func (s *Store) err(err error, what string) error { return s.d.Err(err, what) }

// Engine is what an engine package's Store offers: the core's methods (the default
// tenant's store, the registry, the tenants' views) plus its own Ping and Close.
type Engine interface {
	Scoped
	meta.Tenanted
	meta.Tenants
	meta.SiteRegistry
	// Migrate applies pending migrations; see Store.Migrate.
	Migrate(ctx context.Context) error
}

var (
	_ meta.Outbox       = (*Store)(nil)
	_ meta.Rejections   = (*Store)(nil)
	_ meta.Usage        = (*Store)(nil)
	_ meta.Tenants      = (*Store)(nil)
	_ meta.Tenanted     = (*Store)(nil)
	_ meta.Sites        = (*Store)(nil)
	_ meta.SiteRegistry = (*Store)(nil)
	_ Scoped            = view{}
)

// IsNoRows reports whether err says a query returned no row.
func IsNoRows(err error) bool { return errors.Is(err, sql.ErrNoRows) }

// Collect reads every row of rows with scan and closes rows; err is the error of the
// query that returned rows. The result is never nil.
func Collect[T any](rows Rows, err error, scan func(Row) (T, error)) ([]T, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []T{}
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}
