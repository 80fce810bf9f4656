package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"net/url"
	"sync/atomic"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/meta"
	"modernc.org/sqlite"
	lib "modernc.org/sqlite/lib"
)

// Store is the SQLite metadata store. It is safe for concurrent use.
type Store struct {
	db *sql.DB
	// wsem serialises this process's write transactions (capacity 1).
	wsem chan struct{}
	// onEvent runs after a transaction that stored a webhook event commits.
	onEvent atomic.Pointer[func()]
}

var _ meta.Store = (*Store)(nil)

// maxConns bounds the pool: enough for concurrent readers next to the one writer.
const maxConns = 8

// dsnParams: busy_timeout first (the driver applies it before the other pragmas), WAL,
// foreign keys, synchronous=NORMAL, and BEGIN IMMEDIATE for every transaction.
const dsnParams = "_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)" +
	"&_pragma=synchronous(NORMAL)&_txlock=immediate"

// Open opens (creating if needed) the database file at path. It does not migrate: call
// Migrate before use.
func Open(ctx context.Context, path string) (*Store, error) {
	if err := registerFuncs(); err != nil {
		return nil, coffer.Internal(err, "register sqlite functions")
	}
	db, err := sql.Open("sqlite", dsn(path))
	if err != nil {
		return nil, coffer.Internal(err, "open sqlite database")
	}
	db.SetMaxOpenConns(maxConns)
	db.SetMaxIdleConns(maxConns)
	if err := db.PingContext(ctx); err != nil {
		_ = db.Close()
		return nil, coffer.Internal(err, "open sqlite database")
	}
	return &Store{db: db, wsem: make(chan struct{}, 1)}, nil
}

// dsn builds a file: URI so that any path (spaces, '?', '#') is taken literally.
func dsn(path string) string {
	return "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + dsnParams
}

// Ping checks the connection.
func (s *Store) Ping(ctx context.Context) error {
	return dbErr(s.db.PingContext(ctx), "ping sqlite")
}

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// write runs fn in a write transaction (BEGIN IMMEDIATE) and commits it when fn
// returns nil. Errors are mapped by dbErr.
func (s *Store) write(ctx context.Context, what string, fn func(*sql.Tx) error) error {
	select {
	case s.wsem <- struct{}{}:
	case <-ctx.Done():
		return coffer.Internal(ctx.Err(), what)
	}
	defer func() { <-s.wsem }()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return dbErr(err, what)
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return dbErr(err, what)
	}
	return dbErr(tx.Commit(), what)
}

// dbErr maps err to a *coffer.Error: domain errors pass through, constraint violations
// become ECONFLICT or ENOTFOUND, anything else EINTERNAL.
func dbErr(err error, what string) error {
	var ce *coffer.Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ce):
		return err
	case errors.Is(err, sql.ErrNoRows):
		return coffer.Errorf(coffer.ENOTFOUND, "%s: not found", what)
	}
	switch {
	case isUnique(err):
		return coffer.Errorf(coffer.ECONFLICT, "%s: already exists", what)
	case isForeignKey(err):
		return coffer.Errorf(coffer.ENOTFOUND, "%s: bucket not found", what)
	}
	return coffer.Internal(err, what)
}

// isUnique reports whether err is a primary key or unique constraint violation.
func isUnique(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) &&
		(se.Code() == lib.SQLITE_CONSTRAINT_PRIMARYKEY || se.Code() == lib.SQLITE_CONSTRAINT_UNIQUE)
}

// isForeignKey reports whether err is a foreign key constraint violation.
func isForeignKey(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code() == lib.SQLITE_CONSTRAINT_FOREIGNKEY
}

type scanner interface{ Scan(dest ...any) error }

type queryer interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

func micros(t time.Time) int64 { return t.UnixMicro() }

func fromMicros(us int64) time.Time { return time.UnixMicro(us).UTC() }
