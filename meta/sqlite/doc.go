// Package sqlite is the embedded metadata store: modernc.org/sqlite (pure Go, no cgo)
// in WAL mode.
//
// Durability: journal_mode=WAL with synchronous=NORMAL. A committed transaction
// survives a crash of the process (the WAL is in the OS page cache and is replayed on
// the next open); an OS crash or power loss may roll back the last transactions before
// the most recent checkpoint, but never corrupts the database.
//
// Concurrency: one *sql.DB with a few connections, so reads run concurrently with a
// write. Write transactions start with BEGIN IMMEDIATE (_txlock=immediate) and are
// also serialised inside the process, so they never fail with SQLITE_BUSY on a lock
// upgrade; other processes on the same file wait up to busy_timeout (5 s).
//
// Timestamps are stored as integer Unix microseconds (UTC). Open does not migrate:
// call Migrate once after Open.
//
// Tenants: every row carries tenant_id and the store's tenant views (ForTenant) bind
// it in every statement. Usage is kept by triggers on files (0006_tenants.sql), which
// SQLite compiles into every statement that changes files; the write path's statements
// are therefore prepared once per connection (stmts.go). With one writer at a time a
// quota check cannot race another commit.
//
// The queries are the shared SQL core's (meta/internal/sqlcore); this package holds
// the SQLite dialect, the connection and the migrations.
package sqlite
