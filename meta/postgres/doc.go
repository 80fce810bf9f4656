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
// Tenants: every row carries tenant_id and the store's tenant views (ForTenant) bind
// it in every statement. Usage is kept by a trigger on files (0009_tenants.sql): a
// tenant with a quota counts in one row, locked by each commit until it ends, so
// concurrent commits check the quota in turn and cannot overshoot; a tenant without one
// (the default tenant) counts in a row per connection, so its uploads do not queue.
// The triggers publish every committed change on the cluster bus's channel, in its
// wire format (package bus: Decode reads them; bus/postgres listens): the payloads
// name the tenant ("f:<tenant>/<file id>", "b:<tenant>/<bucket>", "r:<tenant>",
// "t:<tenant>", "s:<tenant>"; the default tenant's are the old "f:<id>", "b:<id>",
// "r").
//
// The queries are the shared SQL core's (meta/internal/sqlcore); this package holds
// the PostgreSQL dialect, the connection and the migrations.
package postgres
