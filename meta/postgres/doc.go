// Package postgres is the PostgreSQL metadata store (pgx v5, pgxpool).
//
// Names and bucket ids use the "C" collation so that listings are ordered bytewise,
// exactly like the SQLite store, whatever the database's locale. File ids are uuid
// columns; metadata is json (kept as sent); timestamps are timestamptz (microsecond precision).
//
// Open does not migrate: call Migrate once after Open. Migrate holds a transaction-level
// advisory lock, so several processes starting at once apply each migration once. The
// schema lives in the connection's search_path: add search_path=NAME to the URL to keep
// coffer's tables in their own schema.
//
// The queries are the shared SQL core's (meta/internal/sqlcore); this package holds
// the PostgreSQL dialect, the connection and the migrations.
package postgres
