// Package metatest is the conformance suite every meta.Store must pass. A store is
// "done" when Run (and RunMigrate, for stores with migrations) pass against it.
//
//	func TestConformance(t *testing.T) {
//		metatest.Run(t, func(t *testing.T) meta.Store { return openMigrated(t) })
//	}
package metatest

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"sort"
	"testing"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/meta"
)

type test struct {
	name string
	fn   func(t *testing.T, s meta.Store)
}

// Run runs the suite. newStore must return a fresh, empty, already migrated store (only
// the default bucket exists) and arrange for it to be closed when t ends.
func Run(t *testing.T, newStore func(t *testing.T) meta.Store) {
	groups := [][]test{bucketTests, uploadTests, fileTests, listTests, filterTests, outboxTests, payloadTests, rejectionTests, nameTests}
	for _, g := range groups {
		for _, tt := range g {
			t.Run(tt.name, func(t *testing.T) { tt.fn(t, newStore(t)) })
		}
	}
}

func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	if got := coffer.ErrorCode(err); got != code {
		t.Fatalf("error = %v (code %q), want code %q", err, got, code)
	}
	if err != nil {
		var ce *coffer.Error
		if !errors.As(err, &ce) {
			t.Fatalf("error %v is not a *coffer.Error", err)
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func newKey() string { return "test/" + coffer.NewFileID() }

// newFile returns a file for bucket with a fresh id and blob key.
func newFile(bucket, name string) *coffer.File {
	return &coffer.File{
		ID: coffer.NewFileID(), BucketID: bucket, Name: name, Size: 3, MimeType: "text/plain",
		ETag: `"900150983cd24fb0d6963f7d28e17f72"`, UploadedByUserID: "user-1",
		Metadata: json.RawMessage(`{"k":"v"}`), BlobKey: newKey(),
	}
}

// create makes files visible the way an upload does: an intent per blob, then
// CreateFiles.
func create(t *testing.T, s meta.Store, files ...*coffer.File) {
	t.Helper()
	for _, f := range files {
		must(t, s.BeginUpload(t.Context(), f.BlobKey, nil))
	}
	must(t, s.CreateFiles(t.Context(), files))
}

// createNames creates one uploaded file per name in bucket and returns them.
func createNames(t *testing.T, s meta.Store, bucket string, names ...string) []*coffer.File {
	t.Helper()
	files := make([]*coffer.File, len(names))
	for i, n := range names {
		files[i] = newFile(bucket, n)
	}
	create(t, s, files...)
	return files
}

func mustBucket(t *testing.T, s meta.Store, id string) *coffer.Bucket {
	t.Helper()
	b := coffer.NewBucket(id)
	must(t, s.CreateBucket(t.Context(), b))
	return b
}

// checkTime fails unless tm is set, UTC and truncated to microseconds.
func checkTime(t *testing.T, what string, tm time.Time) {
	t.Helper()
	switch {
	case tm.IsZero():
		t.Errorf("%s is zero", what)
	case tm.Location() != time.UTC:
		t.Errorf("%s = %v, want UTC", what, tm)
	case tm.Nanosecond()%1000 != 0:
		t.Errorf("%s = %v, not truncated to microseconds", what, tm)
	}
}

// checkFile compares every field of got with want (metadata as JSON, times with Equal).
func checkFile(t *testing.T, got, want *coffer.File) {
	t.Helper()
	if got == nil || want == nil {
		t.Fatalf("file: got %v, want %v", got, want)
	}
	g, w := *got, *want
	if !jsonEqual(g.Metadata, w.Metadata) {
		t.Errorf("file %s metadata = %s, want %s", w.ID, g.Metadata, w.Metadata)
	}
	if !g.CreatedAt.Equal(w.CreatedAt) || !g.UpdatedAt.Equal(w.UpdatedAt) {
		t.Errorf("file %s times = %v/%v, want %v/%v", w.ID, g.CreatedAt, g.UpdatedAt, w.CreatedAt, w.UpdatedAt)
	}
	checkTime(t, "CreatedAt", g.CreatedAt)
	checkTime(t, "UpdatedAt", g.UpdatedAt)
	g.Metadata, w.Metadata = nil, nil
	g.CreatedAt, g.UpdatedAt, w.CreatedAt, w.UpdatedAt = time.Time{}, time.Time{}, time.Time{}, time.Time{}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("file = %+v\nwant   %+v", g, w)
	}
}

// jsonEqual compares two JSON documents semantically (numbers by their text).
func jsonEqual(a, b []byte) bool {
	va, ea := decodeJSON(a)
	vb, eb := decodeJSON(b)
	return ea == nil && eb == nil && reflect.DeepEqual(va, vb)
}

func decodeJSON(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	err := d.Decode(&v)
	return v, err
}

func ids(files []*coffer.File) []string {
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = f.ID
	}
	return out
}

// sortByNameID sorts files the way ListFiles must: by name, then id, bytewise.
func sortByNameID(files []*coffer.File) {
	sort.Slice(files, func(i, j int) bool {
		if files[i].Name != files[j].Name {
			return files[i].Name < files[j].Name
		}
		return files[i].ID < files[j].ID
	})
}

func intentKeys(t *testing.T, s meta.Store) map[string]meta.Intent {
	t.Helper()
	in, err := s.StaleIntents(t.Context(), time.Now().Add(time.Hour))
	must(t, err)
	out := map[string]meta.Intent{}
	for _, i := range in {
		out[i.BlobKey] = i
	}
	return out
}
