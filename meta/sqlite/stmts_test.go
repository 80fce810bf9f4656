package sqlite

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/meta/internal/sqlcore"
	"github.com/coffer/coffer/meta/metatest"
)

// TestStmtCache: the write path's statements are prepared once and reused; those
// whose text grows with a list are not cached.
func TestStmtCache(t *testing.T) {
	s := metatest.Open(t, Open, filepath.Join(t.TempDir(), "s.db"))
	metatest.Migrated(t, s)
	c := &stmts{db: s.db}
	s.core = sqlcore.New(&conn{db: s.db, w: &batcher{max: maxBatch, db: s.db, stmts: c, wsem: make(chan struct{}, 1)}}, newDialect())
	ctx := t.Context()
	if err := s.CreateTenant(ctx, &coffer.Tenant{ID: "p", State: coffer.TenantDeleting}); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		key := "k" + string(rune('a'+i))
		f := &coffer.File{ID: coffer.NewFileID(), BucketID: coffer.DefaultBucketID, Name: "n", BlobKey: key}
		if err := s.BeginUpload(ctx, key, nil); err != nil {
			t.Fatal(err)
		}
		if err := s.ForTenant("p").BeginUpload(ctx, key, f); err != nil {
			t.Fatal(err)
		}
		if err := s.CreateFiles(ctx, []*coffer.File{f}); err != nil {
			t.Fatal(err)
		}
	}
	n := len(c.m)
	if _, _, err := s.PurgeTenant(ctx, "p", 2); err != nil {
		t.Fatal(err)
	}
	for q := range c.m {
		if strings.Contains(q, "IN (?") {
			t.Errorf("cached a statement whose text grows with a list: %s", q)
		}
	}
	if n == 0 || n > 12 {
		t.Errorf("%d statements cached after 9 writes of 4 kinds and a tenant", n)
	}
}
