package service_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/blob"
	"github.com/coffer/coffer/blob/memblob"
	"github.com/coffer/coffer/meta"
	"github.com/coffer/coffer/meta/sqlite"
	"github.com/coffer/coffer/service"
)

// flakyRules fails GetRules while failing is set, and counts the calls.
type flakyRules struct {
	meta.Store
	failing atomic.Bool
	calls   atomic.Int64
}

func (f *flakyRules) GetRules(ctx context.Context) ([]byte, error) {
	f.calls.Add(1)
	if f.failing.Load() {
		return nil, errors.New("connection reset by peer")
	}
	return f.Store.GetRules(ctx)
}

// A reload that fails (a passing database error when another node's notification
// arrives) keeps the rules in force and is retried until it succeeds: the
// notification will not come again, and the rules decide who reads what.
func TestFailedRulesReloadIsRetried(t *testing.T) {
	ctx := context.Background()
	m, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "r.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	must(t, m.Migrate(ctx))
	store := &flakyRules{Store: m}
	svc, err := service.New(service.DefaultConfig(), store, blob.New(memblob.New()), service.Caches{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	must(t, svc.LoadRules(ctx, nil))
	inForce := func() []byte {
		doc, err := svc.Rules(coffer.AdminPrincipal())
		must(t, err)
		return doc
	}
	before := inForce()
	refreshCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { svc.RefreshRules(refreshCtx, time.Hour); close(done) }()
	defer func() { stop(); <-done }()

	// Another node stores new rules; this node's reload fails.
	must(t, m.PutRules(ctx, []byte(`{"rules":[{"role":"user","buckets":["default"],"read":{}}]}`)))
	store.failing.Store(true)
	if svc.ReloadRules(ctx) == nil {
		t.Fatal("the reload did not fail")
	}
	if !bytes.Equal(inForce(), before) {
		t.Fatal("a failed reload changed the rules in force")
	}
	store.failing.Store(false)
	deadline := time.Now().Add(10 * time.Second)
	for bytes.Equal(inForce(), before) {
		if time.Now().After(deadline) {
			t.Fatalf("the new rules were not reloaded after the database came back (%d reads)", store.calls.Load())
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Once reloaded, the refresher waits for its interval (an hour) again.
	calls := store.calls.Load()
	time.Sleep(1500 * time.Millisecond)
	if n := store.calls.Load() - calls; n != 0 {
		t.Fatalf("%d more reads of the rules after a successful reload", n)
	}
}

// Rules an admin sets are installed even when reading them back fails: they are
// stored, and a node must not keep enforcing the rules they replaced.
func TestSetRulesWhileReloadFails(t *testing.T) {
	ctx := context.Background()
	store := &flakyRules{Store: openSQLite(t)}
	svc, err := service.New(service.DefaultConfig(), store, blob.New(memblob.New()), service.Caches{}, slog.New(slog.DiscardHandler))
	must(t, err)
	must(t, svc.LoadRules(ctx, []byte(`{"rules":[]}`)))
	f := put(t, svc, coffer.AdminPrincipal(), "", "abc")
	reader := &coffer.Principal{Role: "reader"}
	if _, _, err := svc.GetFile(ctx, reader, f.ID); coffer.ErrorCode(err) != coffer.EFORBIDDEN {
		t.Fatalf("reading without rules: %v", err)
	}
	store.failing.Store(true)
	must(t, svc.SetRules(ctx, coffer.AdminPrincipal(), []byte(`{"rules":[{"role":"reader","buckets":["default"],"read":{}}]}`)))
	if got := read(t, svc, reader, f.ID); got != "abc" {
		t.Fatalf("read %q under the new rules", got)
	}
}
