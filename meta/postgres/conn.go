package postgres

import (
	"context"

	"github.com/coffer/coffer/meta/internal/sqlcore"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// core is the shared SQL store, embedded under an unexported name.
type core = sqlcore.Store

// conn runs the shared core's statements on a pgx pool, numbering their ?
// placeholders (sqlcore.Rebind). A statement without arguments is sent as it is, so a
// migration may hold several statements.
type conn struct{ pool *pgxpool.Pool }

var (
	_ sqlcore.DB        = conn{}
	_ sqlcore.RowWriter = conn{}
)

// querier is what both the pool and a transaction offer.
type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// on adapts q (the pool or a transaction) to sqlcore.Querier.
type on struct{ q querier }

// rebind numbers q's placeholders when it has arguments.
func rebind(q string, args []any) string {
	if len(args) == 0 {
		return q
	}
	return sqlcore.Rebind(q)
}

// Exec runs a statement and returns how many rows it changed.
func (o on) Exec(ctx context.Context, q string, args ...any) (int64, error) {
	tag, err := o.q.Exec(ctx, rebind(q, args), args...)
	return tag.RowsAffected(), err
}

// Query runs a statement that returns rows.
func (o on) Query(ctx context.Context, q string, args ...any) (sqlcore.Rows, error) {
	return o.q.Query(ctx, rebind(q, args), args...)
}

// QueryRow runs a statement that returns at most one row.
func (o on) QueryRow(ctx context.Context, q string, args ...any) sqlcore.Row {
	return o.q.QueryRow(ctx, rebind(q, args), args...)
}

// Exec runs a statement on the pool.
func (c conn) Exec(ctx context.Context, q string, args ...any) (int64, error) {
	return on{c.pool}.Exec(ctx, q, args...)
}

// Query runs a statement that returns rows on the pool.
func (c conn) Query(ctx context.Context, q string, args ...any) (sqlcore.Rows, error) {
	return on{c.pool}.Query(ctx, q, args...)
}

// QueryRow runs a statement that returns at most one row on the pool.
func (c conn) QueryRow(ctx context.Context, q string, args ...any) sqlcore.Row {
	return on{c.pool}.QueryRow(ctx, q, args...)
}

// Tx runs fn in a transaction (READ COMMITTED) and commits it when fn returns nil.
func (c conn) Tx(ctx context.Context, fn func(sqlcore.Querier) error) error {
	return pgx.BeginTxFunc(ctx, c.pool, pgx.TxOptions{}, func(tx pgx.Tx) error { return fn(on{tx}) })
}

// Write runs one writing statement on the pool (its own implicit transaction).
func (c conn) Write(ctx context.Context, q string, args ...any) (int64, error) {
	return on{c.pool}.Exec(ctx, q, args...)
}

// Ping checks the connection.
func (c conn) Ping(ctx context.Context) error { return c.pool.Ping(ctx) }

// WriteScan runs one writing statement that returns a row on the pool (its own
// implicit transaction: one round trip) and scans the row into dest.
func (c conn) WriteScan(ctx context.Context, q string, args []any, dest ...any) error {
	return on{c.pool}.QueryRow(ctx, q, args...).Scan(dest...)
}
