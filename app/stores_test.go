package app

import (
	"context"
	"strings"
	"testing"

	"github.com/coffer/coffer/meta"
	"github.com/coffer/coffer/meta/sqlite"
)

// bareStore is a metadata store with no optional capability.
type bareStore struct{ meta.Store }

// outboxOnly adds the webhook outbox and nothing else.
type outboxOnly struct {
	meta.Store
	meta.Outbox
}

// A store without a capability the server needs is a start-up error naming it, not
// a panic.
func TestStoreCapabilities(t *testing.T) {
	db, err := sqlite.Open(context.Background(), t.TempDir()+"/coffer.db")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, tc := range []struct {
		store meta.Store
		want  string // "" = accepted
	}{
		{bareStore{db}, "metadata store test does not support webhooks (meta.Outbox)"},
		{outboxOnly{db, db}, "metadata store test does not record virus-scan rejections (meta.Rejections)"},
		{db, ""},
	} {
		st := &stores{meta: tc.store}
		_, err := st.capabilities("test")
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%T: %v", tc.store, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%T: error %v, want %q", tc.store, err, tc.want)
		}
	}
}

// Migrate leaves a database that the server opens, and a second server on the same
// data dir is refused while the first runs.
func TestMigrateAndDataDirLock(t *testing.T) {
	c := testConfig(t)
	if err := Migrate(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", t.TempDir())
	m, err := New(context.Background(), c, Parts{}, discard())
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if _, err := New(context.Background(), c, Parts{}, discard()); err == nil || !strings.Contains(err.Error(), "in use by another coffer process") {
		t.Errorf("second server on one data dir: %v", err)
	}
}
