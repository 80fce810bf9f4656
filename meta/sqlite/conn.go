package sqlite

import (
	"context"
	"database/sql"

	"github.com/coffer/coffer/meta/internal/sqlcore"
)

// core is the shared SQL store, embedded under an unexported name.
type core = sqlcore.Store

// conn runs the shared core's statements on database/sql. SQLite has one writer at a
// time: wsem (capacity 1) serialises this process's writes, so they queue here rather
// than spin on SQLITE_BUSY; BEGIN IMMEDIATE (see dsnParams) orders them against other
// processes.
type conn struct {
	db   *sql.DB
	wsem chan struct{}
}

var _ sqlcore.DB = (*conn)(nil)

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

// lock takes the write semaphore; it fails only when ctx ends first.
func (c *conn) lock(ctx context.Context) error {
	select {
	case c.wsem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Tx runs fn in a write transaction (BEGIN IMMEDIATE) and commits it when fn returns
// nil.
func (c *conn) Tx(ctx context.Context, fn func(sqlcore.Querier) error) error {
	if err := c.lock(ctx); err != nil {
		return err
	}
	defer func() { <-c.wsem }()
	tx, err := c.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(txConn{tx}); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

// Write runs one writing statement in its own (implicit) transaction.
func (c *conn) Write(ctx context.Context, q string, args ...any) (int64, error) {
	if err := c.lock(ctx); err != nil {
		return 0, err
	}
	defer func() { <-c.wsem }()
	return execIn(ctx, c.db, q, args)
}

// txConn runs statements inside a transaction.
type txConn struct{ tx *sql.Tx }

// Exec runs a statement and returns how many rows it changed.
func (t txConn) Exec(ctx context.Context, q string, args ...any) (int64, error) {
	return execIn(ctx, t.tx, q, args)
}

// Query runs a statement that returns rows.
func (t txConn) Query(ctx context.Context, q string, args ...any) (sqlcore.Rows, error) {
	return queryIn(ctx, t.tx, q, args)
}

// QueryRow runs a statement that returns at most one row.
func (t txConn) QueryRow(ctx context.Context, q string, args ...any) sqlcore.Row {
	return t.tx.QueryRowContext(ctx, q, args...)
}

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
