package cache_test

import (
	"testing"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/meta"
)

// putNamed writes a version of the named file "n.txt" with etag through s.
func putNamed(t *testing.T, s meta.Store, etag string) (before, after *coffer.File) {
	t.Helper()
	f := &coffer.File{ID: coffer.NewFileID(), BucketID: "default", Name: "n.txt", Size: 3,
		MimeType: "text/plain", ETag: etag, BlobKey: "k/" + coffer.NewFileID()}
	if err := s.BeginUpload(t.Context(), f.BlobKey, nil); err != nil {
		t.Fatal(err)
	}
	before, after, err := s.PutFileByName(t.Context(), f, meta.Precondition{})
	if err != nil {
		t.Fatal(err)
	}
	return before, after
}

// A replace by name drops the row cached by id; lookups by name always reach the store.
func TestPutFileByNameInvalidates(t *testing.T) {
	counting := meta.NewCounting(openSQLite(t))
	m := cached(t, counting)
	ctx := t.Context()
	_, v1 := putNamed(t, m, `"v1"`)
	if got, err := m.GetFile(ctx, v1.ID); err != nil || got.ETag != `"v1"` {
		t.Fatalf("GetFile: %v %v", got, err)
	}
	if got, _ := m.GetFile(ctx, v1.ID); got.ETag != `"v1"` {
		t.Fatal("the test needs the row to be cached")
	}
	before, v2 := putNamed(t, m, `"v2"`)
	if before == nil || v2.ID != v1.ID {
		t.Fatalf("second put did not replace: before %v, after %v", before, v2)
	}
	if got, err := m.GetFile(ctx, v1.ID); err != nil || got.ETag != `"v2"` {
		t.Fatalf("after PutFileByName: GetFile = %v %v, want etag v2", got, err)
	}
	calls := counting.Counts()
	for range 2 {
		if got, err := m.GetFileByName(ctx, "default", "n.txt"); err != nil || got.ETag != `"v2"` {
			t.Fatalf("GetFileByName: %v %v", got, err)
		}
	}
	after := counting.Counts()
	if n := after[indexOf(t, "GetFileByName")] - calls[indexOf(t, "GetFileByName")]; n != 2 {
		t.Fatalf("2 lookups by name made %d store calls, want 2", n)
	}
}

// indexOf returns the index of method name in meta.MethodNames.
func indexOf(t *testing.T, name string) int {
	t.Helper()
	for i, n := range meta.MethodNames {
		if n == name {
			return i
		}
	}
	t.Fatalf("no method %q in meta.MethodNames", name)
	return -1
}
