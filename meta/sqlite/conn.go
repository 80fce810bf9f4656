package sqlite

import (
	"context"
	"database/sql"

	"github.com/coffer/coffer/meta/internal/sqlcore"
)

// core is the shared SQL store, embedded under an unexported name.
type core = sqlcore.Store

// conn runs the shared core's statements on database/sql. SQLite has one writer at a
// time: writes queue in this process (batch.go) rather than spin on SQLITE_BUSY, and
// run in group-committed batches; BEGIN IMMEDIATE (see dsnParams) orders them against
// other processes.
type conn struct {
	db *sql.DB
	w  *batcher
}

var _ sqlcore.DB = (*conn)(nil)

// newConn returns a conn over db.
func newConn(db *sql.DB) *conn {
	return &conn{db: db, w: &batcher{max: maxBatch, db: db, stmts: &stmts{db: db}, wsem: make(chan struct{}, 1)}}
}

// Exec runs a statement and returns how many rows it changed.
func (c *conn) Exec(ctx context.Context, q string, args ...any) (int64, error) {
	return execIn(ctx, c.db, q, args)
}

// Query runs a statement that returns rows.
func (c *conn) Query(ctx context.Context, q string, args ...any) (sqlcore.Rows, error) {
	return queryIn(ctx, c.db, q, args)
}

// QueryRow runs a statement that returns at most one row.
func (c *conn) QueryRow(ctx context.Context, q string, args ...any) sqlcore.Row {
	return c.db.QueryRowContext(ctx, q, args...)
}

// Tx runs fn in a write transaction (BEGIN IMMEDIATE), perhaps batched with other
// callers' (batch.go), and returns once its changes are committed or with its error
// and none of them.
func (c *conn) Tx(ctx context.Context, fn func(sqlcore.Querier) error) error {
	return c.w.run(ctx, fn)
}

// Write runs one writing statement as a transaction of its own.
func (c *conn) Write(ctx context.Context, q string, args ...any) (int64, error) {
	var n int64
	err := c.w.run(ctx, func(tx sqlcore.Querier) error {
		var err error
		n, err = tx.Exec(ctx, q, args...)
		return err
	})
	return n, err
}

// Ping checks the connection.
func (c *conn) Ping(ctx context.Context) error { return c.db.PingContext(ctx) }

// execer is what *sql.DB and *sql.Tx offer.
type execer interface {
	ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error)
}

func execIn(ctx context.Context, e execer, q string, args []any) (int64, error) {
	res, err := e.ExecContext(ctx, q, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func queryIn(ctx context.Context, e execer, q string, args []any) (sqlcore.Rows, error) {
	r, err := e.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	return rows{r}, nil
}

// rows adapts *sql.Rows, whose Close returns an error nobody needs after Err.
type rows struct{ *sql.Rows }

// Close closes the result set.
func (r rows) Close() { _ = r.Rows.Close() }
