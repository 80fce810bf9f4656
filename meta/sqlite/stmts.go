package sqlite

import (
	"context"
	"database/sql"
	"strings"
	"sync"
)

// maxStmts bounds the statement cache: the core's writing statements are a few dozen.
const maxStmts = 256

// stmts caches the prepared statements of the write path. SQLite compiles a statement
// together with the triggers it fires (the usage triggers of every change to files), and
// database/sql would prepare every statement again on each call; a cached *sql.Stmt is
// prepared once per connection and reused inside transactions (sql.Tx.StmtContext).
type stmts struct {
	db *sql.DB
	mu sync.Mutex
	m  map[string]*sql.Stmt
}

// get returns q prepared, or nil when it is not cached (the cache is full, or
// preparing failed: the caller then runs q unprepared and sees the error itself).
func (c *stmts) get(ctx context.Context, q string) *sql.Stmt {
	c.mu.Lock()
	defer c.mu.Unlock()
	if st, ok := c.m[q]; ok {
		return st
	}
	if len(c.m) >= maxStmts {
		return nil
	}
	st, err := c.db.PrepareContext(ctx, q)
	if err != nil {
		return nil
	}
	if c.m == nil {
		c.m = map[string]*sql.Stmt{}
	}
	c.m[q] = st
	return st
}

// in returns q prepared for tx, or nil (see get). Statements without arguments are
// never cached (a migration holds several statements, which only Exec runs whole), nor
// those whose text grows with a list (IN (?, ?, ...): claims, purges), which would
// fill the cache with one statement per length.
func (c *stmts) in(ctx context.Context, tx *sql.Tx, q string, args []any) *sql.Stmt {
	if c == nil || len(args) == 0 || strings.Contains(q, "IN (?") {
		return nil
	}
	st := c.get(ctx, q)
	if st == nil {
		return nil
	}
	return tx.StmtContext(ctx, st)
}
