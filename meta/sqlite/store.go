package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"net/url"
	"strings"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/meta/internal/sqlcore"
	"modernc.org/sqlite"
	lib "modernc.org/sqlite/lib"
)

// Store is the SQLite metadata store. It is safe for concurrent use. Its methods are the
// shared SQL core's (meta/internal/sqlcore) over this package's dialect; Migrate runs
// in one BEGIN IMMEDIATE transaction, so processes that start together wait for each
// other (busy_timeout).
type Store struct {
	*core
	db *sql.DB
}

var _ sqlcore.Engine = (*Store)(nil)

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
	return &Store{core: sqlcore.New(newConn(db), newDialect()), db: db}, nil
}

// dsn builds a file: URI so that any path (spaces, '?', '#') is taken literally.
func dsn(path string) string {
	return "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + dsnParams
}

// Ping checks the connection.
func (s *Store) Ping(ctx context.Context) error {
	return newDialect().Err(s.db.PingContext(ctx), "ping sqlite")
}

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

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

// quotaPrefix starts the message of the usage triggers' quota refusal
// (0006_tenants.sql).
const quotaPrefix = "tenant storage quota exceeded: "

// quotaMessage returns the usage trigger's message if err is its quota refusal.
func quotaMessage(err error) string {
	var se *sqlite.Error
	if !errors.As(err, &se) || se.Code() != lib.SQLITE_CONSTRAINT_TRIGGER {
		return ""
	}
	msg := se.Error()
	i := strings.Index(msg, quotaPrefix)
	if i < 0 {
		return ""
	}
	msg = msg[i:]
	if j := strings.LastIndex(msg, " ("); j > 0 { // the driver appends " (code)"
		msg = msg[:j]
	}
	return msg
}
