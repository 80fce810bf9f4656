package metatest

import (
	"encoding/json"
	"reflect"
	"sync"
	"testing"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/meta"
)

var nameTests = []test{
	{"Names/CreateThenReplace", testNamesCreateReplace},
	{"Names/UnnamedInvisibleAndUnconstrained", testNamesUnnamed},
	{"Names/Preconditions", testNamesPreconditions},
	{"Names/Errors", testNamesErrors},
	{"Names/RenameOntoTakenName", testNamesRename},
	{"Names/DeleteFreesName", testNamesDelete},
	{"Names/ConcurrentCreateOnly", testNamesConcurrentCreateOnly},
	{"Names/ConcurrentUnconditional", testNamesConcurrentPut},
	{"Names/Events", testNamesEvents},
}

// putNamed uploads a new version of the named file (bucket, name) the way a
// name-addressed face does: an intent for a fresh blob key, then PutFileByName.
func putNamed(t *testing.T, s meta.Store, bucket, name string, p meta.Precondition) (f, before, after *coffer.File, err error) {
	t.Helper()
	f = newFile(bucket, name)
	must(t, s.BeginUpload(t.Context(), f.BlobKey, nil))
	before, after, err = s.PutFileByName(t.Context(), f, p)
	return f, before, after, err
}

func getNamed(t *testing.T, s meta.Store, bucket, name string) *coffer.File {
	t.Helper()
	f, err := s.GetFileByName(t.Context(), bucket, name)
	must(t, err)
	return f
}

func testNamesCreateReplace(t *testing.T, s meta.Store) {
	first, before, after, err := putNamed(t, s, coffer.DefaultBucketID, "dir/a.txt", meta.Precondition{})
	must(t, err)
	if before != nil || !after.IsUploaded || after.ID != first.ID {
		t.Fatalf("create: before %v, after %+v", before, after)
	}
	checkFile(t, first, after) // *f holds the stored row
	checkFile(t, getNamed(t, s, coffer.DefaultBucketID, "dir/a.txt"), after)
	if _, ok := intentKeys(t, s)[first.BlobKey]; ok {
		t.Fatal("create left the intent behind")
	}
	created := after
	second := newFile(coffer.DefaultBucketID, "dir/a.txt")
	second.Size, second.ETag, second.MimeType = 5, `"other"`, "image/png"
	second.UploadedByUserID, second.Metadata = "user-2", json.RawMessage(`{"b":2,"a":1}`)
	secondID := second.ID
	must(t, s.BeginUpload(t.Context(), second.BlobKey, nil))
	before, after, err = s.PutFileByName(t.Context(), second, meta.Precondition{})
	must(t, err)
	checkFile(t, before, created)
	want := *created
	want.Size, want.ETag, want.MimeType, want.BlobKey = 5, `"other"`, "image/png", second.BlobKey
	want.Metadata, want.UpdatedAt = json.RawMessage(`{"b":2,"a":1}`), after.UpdatedAt
	checkFile(t, after, &want) // same id, CreatedAt and uploader
	if string(after.Metadata) != `{"b":2,"a":1}` {
		t.Errorf("metadata = %s, want key order kept", after.Metadata)
	}
	got, err := s.GetFile(t.Context(), created.ID)
	must(t, err)
	checkFile(t, got, &want)
	_, err = s.GetFile(t.Context(), secondID) // a replace does not insert second.ID
	wantCode(t, err, coffer.ENOTFOUND)
}

func testNamesUnnamed(t *testing.T, s meta.Store) {
	createNames(t, s, coffer.DefaultBucketID, "same", "same")
	nameOverUnnamed(t, s, "same")
	createNames(t, s, coffer.DefaultBucketID, "same") // /v1 uploads still may share it
	page, err := s.ListFiles(t.Context(), coffer.ListOptions{BucketID: coffer.DefaultBucketID, Limit: 10})
	must(t, err)
	if len(page.Files) != 4 {
		t.Fatalf("files named same = %d, want 4 (three unnamed, one named)", len(page.Files))
	}
}

// nameOverUnnamed checks that files in the default bucket called name are not named,
// then creates the named file name next to them.
func nameOverUnnamed(t *testing.T, s meta.Store, name string) {
	t.Helper()
	_, err := s.GetFileByName(t.Context(), coffer.DefaultBucketID, name)
	wantCode(t, err, coffer.ENOTFOUND)
	_, before, _, err := putNamed(t, s, coffer.DefaultBucketID, name, meta.Precondition{IfNoneMatch: "*"})
	must(t, err)
	if before != nil {
		t.Fatalf("a file that is not named was replaced: %+v", before)
	}
}

func testNamesPreconditions(t *testing.T, s meta.Store) {
	b := coffer.DefaultBucketID
	_, _, _, err := putNamed(t, s, b, "p", meta.Precondition{IfMatch: "*"})
	wantCode(t, err, coffer.EPRECONDITION)
	_, _, _, err = putNamed(t, s, b, "p", meta.Precondition{IfMatch: `"900150983cd24fb0d6963f7d28e17f72"`})
	wantCode(t, err, coffer.EPRECONDITION)
	_, _, v1, err := putNamed(t, s, b, "p", meta.Precondition{IfNoneMatch: "*"})
	must(t, err)
	refused, _, _, err := putNamed(t, s, b, "p", meta.Precondition{IfNoneMatch: "*"})
	wantCode(t, err, coffer.EPRECONDITION)
	if _, ok := intentKeys(t, s)[refused.BlobKey]; !ok {
		t.Fatal("a refused put removed its intent")
	}
	_, _, _, err = putNamed(t, s, b, "p", meta.Precondition{IfMatch: `"stale"`})
	wantCode(t, err, coffer.EPRECONDITION)
	_, _, _, err = putNamed(t, s, b, "p", meta.Precondition{IfNoneMatch: v1.ETag})
	wantCode(t, err, coffer.EPRECONDITION)
	checkFile(t, getNamed(t, s, b, "p"), v1)
	_, before, _, err := putNamed(t, s, b, "p", meta.Precondition{IfMatch: v1.ETag})
	must(t, err)
	checkFile(t, before, v1)
}

func testNamesErrors(t *testing.T, s meta.Store) {
	f := newFile(coffer.DefaultBucketID, "no-intent")
	_, _, err := s.PutFileByName(t.Context(), f, meta.Precondition{})
	wantCode(t, err, coffer.EABORTED)
	_, _, _, err = putNamed(t, s, "missing-bucket", "x", meta.Precondition{})
	wantCode(t, err, coffer.ENOTFOUND)
	f = newFile(coffer.DefaultBucketID, "bad-id")
	f.ID = "not-a-uuid"
	must(t, s.BeginUpload(t.Context(), f.BlobKey, nil))
	_, _, err = s.PutFileByName(t.Context(), f, meta.Precondition{})
	wantCode(t, err, coffer.EINVALID)
	_, err = s.GetFileByName(t.Context(), coffer.DefaultBucketID, "no-intent")
	wantCode(t, err, coffer.ENOTFOUND)
}

func testNamesRename(t *testing.T, s meta.Store) {
	b := coffer.DefaultBucketID
	_, _, a, err := putNamed(t, s, b, "a", meta.Precondition{})
	must(t, err)
	_, _, _, err = putNamed(t, s, b, "b", meta.Precondition{})
	must(t, err)
	taken := "b"
	_, err = s.UpdateFile(t.Context(), a.ID, coffer.FileUpdate{Name: &taken})
	wantCode(t, err, coffer.ECONFLICT)
	unnamed := createNames(t, s, b, "c")[0]
	_, err = s.UpdateFile(t.Context(), unnamed.ID, coffer.FileUpdate{Name: &taken})
	must(t, err) // files that are not named are not constrained
	free := "c"
	_, err = s.UpdateFile(t.Context(), a.ID, coffer.FileUpdate{Name: &free})
	must(t, err)
	if got := getNamed(t, s, b, "c"); got.ID != a.ID {
		t.Fatalf("named c = %s, want the renamed %s", got.ID, a.ID)
	}
}

func testNamesDelete(t *testing.T, s meta.Store) {
	_, _, a, err := putNamed(t, s, coffer.DefaultBucketID, "d", meta.Precondition{})
	must(t, err)
	_, err = s.DeleteFile(t.Context(), a.ID)
	must(t, err)
	_, err = s.GetFileByName(t.Context(), coffer.DefaultBucketID, "d")
	wantCode(t, err, coffer.ENOTFOUND)
	_, before, _, err := putNamed(t, s, coffer.DefaultBucketID, "d", meta.Precondition{IfNoneMatch: "*"})
	must(t, err)
	if before != nil {
		t.Fatalf("put after delete replaced %+v", before)
	}
}

// racePuts runs n puts of the named file "race" at once and returns their results.
func racePuts(t *testing.T, s meta.Store, n int, p meta.Precondition) (befores []*coffer.File, errs []error) {
	files := make([]*coffer.File, n)
	for i := range files {
		files[i] = newFile(coffer.DefaultBucketID, "race")
		must(t, s.BeginUpload(t.Context(), files[i].BlobKey, nil))
	}
	befores, errs = make([]*coffer.File, n), make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i, f := range files {
		wg.Go(func() {
			<-start
			befores[i], _, errs[i] = s.PutFileByName(t.Context(), f, p)
		})
	}
	close(start)
	wg.Wait()
	return befores, errs
}

func testNamesConcurrentCreateOnly(t *testing.T, s meta.Store) {
	_, errs := racePuts(t, s, 4, meta.Precondition{IfNoneMatch: "*"})
	won := 0
	for _, err := range errs {
		if err == nil {
			won++
			continue
		}
		wantCode(t, err, coffer.EPRECONDITION)
	}
	if won != 1 {
		t.Fatalf("%d create-only puts succeeded, want exactly 1", won)
	}
}

func testNamesConcurrentPut(t *testing.T, s meta.Store) {
	befores, errs := racePuts(t, s, 4, meta.Precondition{})
	created := 0
	for i, err := range errs {
		must(t, err)
		if befores[i] == nil {
			created++
		}
	}
	if created != 1 {
		t.Fatalf("%d unconditional puts created the file, want exactly 1 (the others replace)", created)
	}
}

// A create by name is file.created, a replace file.replaced; a refused write emits none.
func testNamesEvents(t *testing.T, s meta.Store) {
	o := asOutbox(t, s)
	subscribe(t, o, "")
	b := coffer.DefaultBucketID
	_, _, v1, err := putNamed(t, o, b, "e", meta.Precondition{})
	must(t, err)
	_, _, v2, err := putNamed(t, o, b, "e", meta.Precondition{IfMatch: v1.ETag})
	must(t, err)
	_, _, _, err = putNamed(t, o, b, "e", meta.Precondition{IfNoneMatch: "*"})
	wantCode(t, err, coffer.EPRECONDITION)
	cs := claimAll(t, o)
	want := []coffer.EventType{coffer.FileCreated, coffer.FileReplaced}
	if got := eventTypes(t, cs); !reflect.DeepEqual(got, want) {
		t.Fatalf("events = %v, want %v", got, want)
	}
	if ev := decodeEvent(t, cs[0]); ev.File == nil || ev.File.ID != v1.ID || ev.Before != nil {
		t.Errorf("file.created: file %+v before %+v", ev.File, ev.Before)
	}
	if ev := decodeEvent(t, cs[1]); ev.File == nil || ev.Before == nil || ev.File.ID != v2.ID ||
		ev.Before.ETag != v1.ETag || ev.File.ETag != v2.ETag {
		t.Errorf("file.replaced: file %+v before %+v", ev.File, ev.Before)
	}
}
