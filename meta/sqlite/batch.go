package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"sync"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/meta/internal/sqlcore"
)

// Group commit. SQLite has one writer, so under concurrent writes (50 uploads at once,
// each recording an intent and then its file) write transactions queued on the
// write lock, and each one paid a BEGIN, a COMMIT and a WAL append of every page it
// touched, although consecutive inserts touch the same few pages. Now a writer that
// gets the lock runs the transactions queued behind it too (at most maxBatch), in one
// SQLite transaction, each inside its own SAVEPOINT: a transaction whose fn fails is
// rolled back to its savepoint alone and gets its own error; the others commit
// together and all get the COMMIT's result. Callers see what they saw before (Tx
// returns after their changes are committed, or with their error and none of their
// changes), with one WAL append per batch.
//
// Statements of a batch run with a context of their own, not their caller's: a
// caller's cancellation interrupts SQLite, and an interrupted write rolls back the
// whole transaction, which is now other callers' too. A caller whose context has
// ended before its turn is skipped with the context's error; statements are short.
const maxBatch = 64

// txReq is one caller's transaction, waiting in a batch queue.
type txReq struct {
	ctx  context.Context
	fn   func(sqlcore.Querier) error
	done chan error // buffered: the batch never blocks on a caller
}

// batcher queues write transactions and runs them in batches under wsem.
type batcher struct {
	max   int // requests per batch at most: maxBatch (1 in benchmarks of the old way)
	db    *sql.DB
	stmts *stmts        // prepared statements (stmts.go); nil for none
	wsem  chan struct{} // capacity 1: the process's one writer
	mu    sync.Mutex
	queue []*txReq
}

// run queues fn and returns its result: it runs in a batch started by whichever
// caller holds the write lock next, possibly this one.
func (b *batcher) run(ctx context.Context, fn func(sqlcore.Querier) error) error {
	r := &txReq{ctx: ctx, fn: fn, done: make(chan error, 1)}
	b.mu.Lock()
	b.queue = append(b.queue, r)
	b.mu.Unlock()
	for {
		select {
		case err := <-r.done:
			return err
		case b.wsem <- struct{}{}:
			if batch := b.take(); len(batch) > 0 {
				b.runBatch(batch)
			}
			<-b.wsem
		case <-ctx.Done():
			if b.remove(r) {
				return ctx.Err()
			}
			return <-r.done // a batch has it: wait for its outcome
		}
	}
}

// take removes and returns the first maxBatch queued requests.
func (b *batcher) take() []*txReq {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := min(len(b.queue), b.max)
	batch := make([]*txReq, n)
	copy(batch, b.queue)
	b.queue = append(b.queue[:0], b.queue[n:]...)
	return batch
}

// remove takes r out of the queue; false if a batch has taken it already.
func (b *batcher) remove(r *txReq) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	for i, q := range b.queue {
		if q == r {
			b.queue = append(b.queue[:i], b.queue[i+1:]...)
			return true
		}
	}
	return false
}

// runBatch runs batch in one transaction and hands every request its result.
func (b *batcher) runBatch(batch []*txReq) {
	errs := make([]error, len(batch))
	err := b.runTx(batch, errs)
	for i, r := range batch {
		if errs[i] == nil {
			errs[i] = err
		}
		r.done <- errs[i]
	}
}

// runTx runs batch's fns in one transaction, recording each fn's own error in errs,
// and returns the error that fails all of them (begin, savepoint or commit).
func (b *batcher) runTx(batch []*txReq, errs []error) error {
	ctx := context.Background()
	tx, err := b.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	q := batchConn{tx, b.stmts}
	if len(batch) == 1 { // nothing to isolate it from: no savepoint
		if errs[0] = call(batch[0], q); errs[0] != nil {
			return tx.Rollback()
		}
		return tx.Commit()
	}
	for i, r := range batch {
		if _, err := tx.ExecContext(ctx, "SAVEPOINT batch"); err != nil {
			_ = tx.Rollback()
			return err
		}
		if errs[i] = call(r, q); errs[i] != nil {
			if _, err := tx.ExecContext(ctx, "ROLLBACK TO batch"); err != nil {
				_ = tx.Rollback()
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, "RELEASE batch"); err != nil {
			_ = tx.Rollback()
			return err
		}
	}
	return tx.Commit()
}

// call runs r's fn, unless r's caller has gone; a panic becomes r's error, so that
// the batch and the write lock survive it.
func call(r *txReq, q sqlcore.Querier) (err error) {
	if err := r.ctx.Err(); err != nil {
		return err
	}
	defer func() {
		if p := recover(); p != nil {
			err = coffer.Internal(fmt.Errorf("panic: %v", p), "sqlite write transaction")
		}
	}()
	return r.fn(q)
}

// batchConn runs a batch's statements with the batch's context (see above), prepared
// once where the cache takes them.
type batchConn struct {
	tx    *sql.Tx
	stmts *stmts
}

// Exec runs a statement and returns how many rows it changed.
func (t batchConn) Exec(_ context.Context, q string, args ...any) (int64, error) {
	ctx := context.Background()
	if st := t.stmts.in(ctx, t.tx, q, args); st != nil {
		res, err := st.ExecContext(ctx, args...)
		if err != nil {
			return 0, err
		}
		return res.RowsAffected()
	}
	return execIn(ctx, t.tx, q, args)
}

// Query runs a statement that returns rows.
func (t batchConn) Query(_ context.Context, q string, args ...any) (sqlcore.Rows, error) {
	ctx := context.Background()
	if st := t.stmts.in(ctx, t.tx, q, args); st != nil {
		r, err := st.QueryContext(ctx, args...)
		if err != nil {
			return nil, err
		}
		return rows{r}, nil
	}
	return queryIn(ctx, t.tx, q, args)
}

// QueryRow runs a statement that returns at most one row.
func (t batchConn) QueryRow(_ context.Context, q string, args ...any) sqlcore.Row {
	ctx := context.Background()
	if st := t.stmts.in(ctx, t.tx, q, args); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return t.tx.QueryRowContext(ctx, q, args...)
}
