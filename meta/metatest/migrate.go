package metatest

import (
	"context"
	"sync"
	"testing"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/meta"
)

// Migrator is a store with an explicit schema migration step.
type Migrator interface {
	meta.Store
	Migrate(ctx context.Context) error
}

// RunMigrate checks that several processes starting at once on an empty database can
// all migrate it, and that migrating again changes nothing. open must return a new,
// unmigrated handle to one and the same empty database on every call, and arrange for
// it to be closed when t ends.
func RunMigrate(t *testing.T, open func(t *testing.T) Migrator) {
	const n = 4
	stores := make([]Migrator, n)
	for i := range stores {
		stores[i] = open(t)
	}
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i, s := range stores {
		wg.Go(func() {
			<-start
			errs[i] = s.Migrate(t.Context())
		})
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("concurrent Migrate %d: %v", i, err)
		}
	}
	mustBucket(t, stores[0], "kept")
	f := newFile("kept", "x")
	create(t, stores[1], f)
	for _, s := range []Migrator{stores[2], open(t)} {
		must(t, s.Migrate(t.Context()))
	}
	list, err := stores[3].ListBuckets(t.Context())
	must(t, err)
	if len(list) != 2 || list[0].ID != coffer.DefaultBucketID || list[1].ID != "kept" {
		t.Fatalf("buckets after migrating again = %d, want default and kept", len(list))
	}
	got, err := stores[3].GetFile(t.Context(), f.ID)
	must(t, err)
	checkFile(t, got, f)
}

// RunNamesUpgrade checks the rule for files that shared a name before the
// name-addressed files' migration: they are kept as they were, not named, and a named
// file may then take their name. open is as for RunMigrate; downgrade must undo that
// one migration on the database (drop its index and column, forget its version).
func RunNamesUpgrade(t *testing.T, open func(t *testing.T) Migrator, downgrade func(t *testing.T)) {
	s := open(t)
	must(t, s.Migrate(t.Context()))
	downgrade(t)
	old := createNames(t, s, coffer.DefaultBucketID, "dup", "dup")
	s = open(t)
	must(t, s.Migrate(t.Context()))
	for _, f := range old {
		got, err := s.GetFile(t.Context(), f.ID)
		must(t, err)
		checkFile(t, got, f)
	}
	nameOverUnnamed(t, s, "dup")
	_, _, _, err := putNamed(t, s, coffer.DefaultBucketID, "dup", meta.Precondition{IfNoneMatch: "*"})
	wantCode(t, err, coffer.EPRECONDITION)
}

// Open opens a store with the driver's open function, fails t if that fails, and
// closes the store when t ends: the one way the driver tests get a handle.
func Open[S Migrator](t *testing.T, open func(context.Context, string) (S, error), dsn string) S {
	t.Helper()
	s, err := open(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// Migrated migrates s, failing t if that fails, and returns it.
func Migrated(t *testing.T, s Migrator) meta.Store {
	t.Helper()
	if err := s.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	return s
}
