package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/meta/internal/sqlcore"
	"github.com/coffer/coffer/meta/metatest"
)

// openBatchConn returns a conn over a fresh database with table t(k TEXT PRIMARY KEY).
func openBatchConn(t *testing.T) *conn {
	t.Helper()
	db, err := sql.Open("sqlite", dsn(filepath.Join(t.TempDir(), "b.db")))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	db.SetMaxOpenConns(maxConns)
	if _, err := db.Exec("CREATE TABLE t (k TEXT PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	return newConn(db)
}

// keys returns the rows of t.
func keys(t *testing.T, c *conn) map[string]bool {
	t.Helper()
	rows, err := c.db.Query("SELECT k FROM t")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	got := map[string]bool{}
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			t.Fatal(err)
		}
		got[k] = true
	}
	return got
}

// waitQueued waits until n transactions wait in c's queue.
func waitQueued(c *conn, n int) {
	for {
		c.w.mu.Lock()
		q := len(c.w.queue)
		c.w.mu.Unlock()
		if q >= n {
			return
		}
		runtime.Gosched()
	}
}

// TestBatchIsolation runs many transactions at once, every third failing after its
// first insert, every fifth inserting a key another already has, one panicking: each
// caller gets its own outcome, and exactly the successful ones' rows are stored.
func TestBatchIsolation(t *testing.T) {
	c := openBatchConn(t)
	var batched sync.WaitGroup
	errFail := errors.New("fn failed")
	const n = 200
	errs := make([]error, n)
	// hold the write lock so the transactions below queue up and run in batches
	c.w.wsem <- struct{}{}
	for i := range n {
		batched.Add(1)
		go func() {
			defer batched.Done()
			errs[i] = c.Tx(context.Background(), func(q sqlcore.Querier) error {
				k := fmt.Sprint(i)
				if i%5 == 0 && i > 0 {
					k = "dup"
				}
				if _, err := q.Exec(context.Background(), "INSERT INTO t (k) VALUES (?)", k); err != nil {
					return err
				}
				if _, err := q.Exec(context.Background(), "INSERT INTO t (k) VALUES (?)", k+"-second"); err != nil {
					return err
				}
				switch {
				case i == 7:
					panic("boom")
				case i%3 == 0:
					return errFail
				}
				return nil
			})
		}()
	}
	waitQueued(c, n)
	<-c.w.wsem
	batched.Wait()
	got := keys(t, c)
	dupOwner := -1
	for i := range n {
		k := fmt.Sprint(i)
		if i%5 == 0 && i > 0 {
			k = "dup"
		}
		wantOK := i != 7 && i%3 != 0
		switch {
		case !wantOK && errs[i] == nil:
			t.Errorf("tx %d: nil error, want its failure", i)
		case wantOK && k == "dup" && errs[i] == nil:
			if dupOwner >= 0 {
				t.Errorf("tx %d and %d both stored key dup", dupOwner, i)
			}
			dupOwner = i
		case wantOK && k != "dup" && errs[i] != nil:
			t.Errorf("tx %d: %v", i, errs[i])
		}
		if k != "dup" && got[k] != wantOK || got[k+"-second"] != got[k] {
			t.Errorf("tx %d (err %v): rows %s=%v %s-second=%v", i, errs[i], k, got[k], k, got[k+"-second"])
		}
	}
	if dupOwner < 0 || !got["dup"] {
		t.Errorf("no transaction stored key dup")
	}
}

// TestBatchCancelledWhileQueued: a caller whose context ends while it waits for the
// lock gets the context's error and its fn never runs; the others are unaffected.
func TestBatchCancelledWhileQueued(t *testing.T) {
	c := openBatchConn(t)
	c.w.wsem <- struct{}{}
	ctx, cancel := context.WithCancel(context.Background())
	ran := false
	done := make(chan error)
	go func() {
		done <- c.Tx(ctx, func(q sqlcore.Querier) error { ran = true; return nil })
	}()
	waitQueued(c, 1)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) || ran {
		t.Fatalf("cancelled tx: %v, ran %v", err, ran)
	}
	<-c.w.wsem
	if n, err := c.Write(context.Background(), "INSERT INTO t (k) VALUES ('a')"); n != 1 || err != nil {
		t.Fatalf("Write after: %d, %v", n, err)
	}
	if got := keys(t, c); !got["a"] || len(got) != 1 {
		t.Fatalf("rows %v", got)
	}
}

// BenchmarkUploadWrites runs metatest.BenchUploadWrites with group commit (batched)
// and one transaction at a time (single, the old way):
//
//	go test -run '^$' -bench UploadWrites -benchtime 3000x ./meta/sqlite/
func BenchmarkUploadWrites(b *testing.B) {
	for _, bc := range []struct {
		name string
		max  int
	}{{"batched", maxBatch}, {"single", 1}} {
		b.Run(bc.name, func(b *testing.B) {
			db, err := sql.Open("sqlite", dsn(filepath.Join(b.TempDir(), "m.db")))
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			db.SetMaxOpenConns(maxConns)
			c := newConn(db)
			c.w.max = bc.max
			s := &Store{core: sqlcore.New(c, newDialect()), db: db}
			if err := s.Migrate(context.Background()); err != nil {
				b.Fatal(err)
			}
			metatest.BenchUploadWrites(b, s)
		})
	}
}

// BenchmarkUploadWritesTenant runs metatest.BenchUploadWritesTenant on a tenant
// without a quota and on one with a quota (every upload checks it):
//
//	go test -run '^$' -bench UploadWritesTenant -benchtime 3000x ./meta/sqlite/
func BenchmarkUploadWritesTenant(b *testing.B) {
	for _, bc := range []struct {
		name  string
		quota coffer.Quota
	}{{"none", coffer.Quota{}}, {"quota", coffer.Quota{MaxBytes: 1 << 40}}} {
		b.Run(bc.name, func(b *testing.B) {
			s, err := Open(b.Context(), filepath.Join(b.TempDir(), "m.db"))
			if err == nil {
				defer s.Close()
				err = s.Migrate(b.Context())
			}
			if err != nil {
				b.Fatal(err)
			}
			metatest.BenchUploadWritesTenant(b, s, bc.quota)
		})
	}
}

// BenchmarkListPage runs metatest.BenchListPage (a page of 100 entries with a
// delimiter, of a bucket of 100,000 files):
//
//	go test -run '^$' -bench ListPage -benchtime 200x ./meta/sqlite/
func BenchmarkListPage(b *testing.B) {
	s, err := Open(b.Context(), filepath.Join(b.TempDir(), "m.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	if err := s.Migrate(b.Context()); err != nil {
		b.Fatal(err)
	}
	metatest.BenchListPage(b, s)
}
