package cache_test

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/bus"
	"github.com/coffer/coffer/cache"
	"github.com/coffer/coffer/internal/pgtest"
	"github.com/coffer/coffer/meta"
	"github.com/coffer/coffer/meta/metatest"
	"github.com/coffer/coffer/meta/postgres"
	"github.com/coffer/coffer/meta/sqlite"
)

func openSQLite(t *testing.T) *sqlite.Store {
	t.Helper()
	s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "coffer.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	return s
}

func openPostgres(t *testing.T, u string) *postgres.Store {
	t.Helper()
	s, err := postgres.Open(t.Context(), u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	return s
}

func cached(t *testing.T, s meta.Store) *cache.Meta {
	t.Helper()
	m, err := cache.NewMeta(s, cache.DefaultMetaConfig())
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// The cache is a metadata store like any other: it passes the same suite.
func TestConformanceSQLite(t *testing.T) {
	metatest.Run(t, func(t *testing.T) meta.Store { return cached(t, openSQLite(t)) })
}

func TestConformancePostgres(t *testing.T) {
	base := pgtest.DatabaseURL(t)
	metatest.Run(t, func(t *testing.T) meta.Store {
		return cached(t, openPostgres(t, pgtest.FreshSchema(t, base)))
	})
}

// upload creates an uploaded file through s.
func upload(t *testing.T, s meta.Store, name string) *coffer.File {
	t.Helper()
	f := &coffer.File{ID: coffer.NewFileID(), BucketID: "default", Name: name, Size: 3,
		MimeType: "text/plain", ETag: `"e"`, IsUploaded: true, BlobKey: "k/" + name}
	if err := s.BeginUpload(t.Context(), f.BlobKey, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateFiles(t.Context(), []*coffer.File{f}); err != nil {
		t.Fatal(err)
	}
	return f
}

func TestRepeatedReadsStayInMemory(t *testing.T) {
	counting := meta.NewCounting(openSQLite(t))
	m := cached(t, counting)
	ctx := t.Context()
	f := upload(t, m, "a.txt")
	before := counting.Total()
	for range 5 {
		got, err := m.GetFile(ctx, f.ID)
		if err != nil || got.Name != "a.txt" {
			t.Fatalf("GetFile: %v %v", got, err)
		}
		got.Name = "changed by the caller" // must not reach the cache
		if _, err := m.GetBucket(ctx, "default"); err != nil {
			t.Fatal(err)
		}
	}
	if n := counting.Total() - before; n != 2 {
		t.Fatalf("5 reads of a file and its bucket made %d store calls, want 2", n)
	}
	if got, _ := m.GetFile(ctx, f.ID); got.Name != "a.txt" {
		t.Fatalf("a caller's change leaked into the cache: %q", got.Name)
	}
	if st := m.FileStats(); st.Hits != 5 || st.Misses != 1 {
		t.Fatalf("file stats %+v, want 5 hits 1 miss", st)
	}
}

func TestWritesInvalidate(t *testing.T) {
	m := cached(t, openSQLite(t))
	ctx := t.Context()
	f := upload(t, m, "a.txt")
	m.GetFile(ctx, f.ID)
	name := "b.txt"
	if _, err := m.UpdateFile(ctx, f.ID, coffer.FileUpdate{Name: &name}); err != nil {
		t.Fatal(err)
	}
	if got, _ := m.GetFile(ctx, f.ID); got.Name != "b.txt" {
		t.Fatalf("after UpdateFile: name %q", got.Name)
	}
	public := true
	m.GetBucket(ctx, "default")
	if _, err := m.UpdateBucket(ctx, "default", coffer.BucketUpdate{Public: &public}); err != nil {
		t.Fatal(err)
	}
	if b, _ := m.GetBucket(ctx, "default"); !b.Public {
		t.Fatal("after UpdateBucket: stale bucket")
	}
	if _, err := m.DeleteFile(ctx, f.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := m.GetFile(ctx, f.ID); coffer.ErrorCode(err) != coffer.ENOTFOUND {
		t.Fatalf("after DeleteFile: %v", err)
	}
}

// Changes the cache did not see arrive through Handle; Flush drops everything and
// reloads the rules.
func TestInvalidateAndFlush(t *testing.T) {
	inner := openSQLite(t)
	m := cached(t, inner)
	ctx := t.Context()
	f := upload(t, m, "a.txt")
	m.GetFile(ctx, f.ID)
	name := "behind the cache's back"
	if _, err := inner.UpdateFile(ctx, f.ID, coffer.FileUpdate{Name: &name}); err != nil {
		t.Fatal(err)
	}
	if got, _ := m.GetFile(ctx, f.ID); got.Name != "a.txt" {
		t.Fatal("the test needs the stale entry to be cached")
	}
	m.Handle(bus.Event{Kind: bus.FileChanged, ID: f.ID})
	if got, _ := m.GetFile(ctx, f.ID); got.Name != name {
		t.Fatalf("after Handle: %q", got.Name)
	}
	var reloads atomic.Int32
	m.OnRulesChanged(func() { reloads.Add(1) })
	m.Handle(bus.Event{Kind: bus.RulesChanged})
	m.Flush()
	m.Handle(bus.Event{Kind: 200}) // a kind from a newer version flushes
	if n := reloads.Load(); n != 3 {
		t.Fatalf("rules reloaded %d times, want 3", n)
	}
}

// A row still being uploaded is never cached: its commit must show at once.
func TestNotUploadedNotCached(t *testing.T) {
	inner := openSQLite(t)
	m := cached(t, inner)
	ctx := t.Context()
	f := &coffer.File{ID: coffer.NewFileID(), BucketID: "default", Name: "p", BlobKey: "k/p"}
	if err := m.BeginUpload(ctx, f.BlobKey, f); err != nil {
		t.Fatal(err)
	}
	if got, err := m.GetFile(ctx, f.ID); err != nil || got.IsUploaded {
		t.Fatalf("GetFile: %+v %v", got, err)
	}
	size, up := int64(3), true
	if _, _, err := inner.CommitUpload(ctx, f.ID, f.BlobKey, coffer.FileUpdate{Size: &size, IsUploaded: &up}); err != nil {
		t.Fatal(err)
	}
	if got, _ := m.GetFile(ctx, f.ID); !got.IsUploaded {
		t.Fatal("a not-uploaded row was served from the cache after its commit")
	}
}

func TestTTL(t *testing.T) {
	inner := openSQLite(t)
	cfg := cache.DefaultMetaConfig()
	cfg.TTL = 50 * time.Millisecond
	m, err := cache.NewMeta(inner, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	f := upload(t, m, "a.txt")
	m.GetFile(ctx, f.ID)
	name := "new"
	inner.UpdateFile(ctx, f.ID, coffer.FileUpdate{Name: &name})
	deadline := time.Now().Add(5 * time.Second)
	for {
		got, _ := m.GetFile(ctx, f.ID)
		if got.Name == name {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("entry outlived its TTL by seconds")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// pausingStore reads a file row, then (once) waits before returning it, so a test can
// change the row and invalidate while the cache's load is in flight.
type pausingStore struct {
	meta.Store
	etag    atomic.Pointer[string]
	started chan struct{}
	resume  chan struct{}
}

func (s *pausingStore) GetFile(ctx context.Context, id string) (*coffer.File, error) {
	f := &coffer.File{ID: id, IsUploaded: true, ETag: *s.etag.Load(), BlobKey: "k"}
	if s.started != nil {
		close(s.started)
		s.started = nil
		<-s.resume
	}
	return f, nil
}

// A load that read a row before another node's change, and finishes after that
// change's invalidation arrived (one key, or a flush after the bus reconnected), is
// not kept: the next read sees the change. otter discards such loads for Invalidate
// but not for InvalidateAll, which the flush count covers.
func TestLoadRacingInvalidationIsNotKept(t *testing.T) {
	for name, invalidate := range map[string]func(m *cache.Meta, id string){
		"invalidate": func(m *cache.Meta, id string) { m.Handle(bus.Event{Kind: bus.FileChanged, ID: id}) },
		"flush":      func(m *cache.Meta, id string) { m.Flush() },
	} {
		st := &pausingStore{started: make(chan struct{}), resume: make(chan struct{})}
		old, changed := "old", "new"
		st.etag.Store(&old)
		m, err := cache.NewMeta(st, cache.DefaultMetaConfig())
		if err != nil {
			t.Fatal(err)
		}
		id := coffer.NewFileID()
		started, done := st.started, make(chan struct{})
		go func() { m.GetFile(context.Background(), id); close(done) }()
		<-started
		st.etag.Store(&changed) // the other node commits
		invalidate(m, id)       // and its notification, or the flush, arrives
		close(st.resume)
		<-done
		if f, err := m.GetFile(context.Background(), id); err != nil || f.ETag != "new" {
			t.Errorf("%s during a load: the next read has etag %v (%v), want new", name, f.ETag, err)
		}
	}
}
