package metatest

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/meta"
)

var fileTests = []test{
	{"File/GetMissing", testGetFileMissing},
	{"File/Update", testUpdateFile},
	{"File/UpdateErrors", testUpdateFileErrors},
	{"File/Delete", testDeleteFile},
	{"File/MetadataRoundTrip", testMetadata},
	{"File/TimestampsUTC", testTimestamps},
	{"File/ListNotUploaded", testListNotUploaded},
	{"File/EachFile", testEachFile},
	{"Ping", func(t *testing.T, s meta.Store) { must(t, s.Ping(t.Context())) }},
}

func testGetFileMissing(t *testing.T, s meta.Store) {
	for _, id := range []string{coffer.NewFileID(), "not-a-uuid", "", "'; DROP TABLE files; --"} {
		_, err := s.GetFile(t.Context(), id)
		wantCode(t, err, coffer.ENOTFOUND)
	}
}

func testUpdateFile(t *testing.T, s meta.Store) {
	ctx := t.Context()
	f := createNames(t, s, coffer.DefaultBucketID, "old-name")[0]
	time.Sleep(2 * time.Millisecond)
	name, md := "dir/new name.txt", json.RawMessage(`{"x":[1,2]}`)
	got, err := s.UpdateFile(ctx, f.ID, coffer.FileUpdate{Name: &name, Metadata: &md, IfBlobKey: &f.BlobKey})
	must(t, err)
	want := *f
	want.Name, want.Metadata, want.UpdatedAt = name, md, got.UpdatedAt
	checkFile(t, got, &want)
	if !got.UpdatedAt.After(f.UpdatedAt) {
		t.Errorf("UpdatedAt not bumped: %v -> %v", f.UpdatedAt, got.UpdatedAt)
	}
	stored, err := s.GetFile(ctx, f.ID)
	must(t, err)
	checkFile(t, stored, got)
	page, err := s.ListFiles(ctx, coffer.ListOptions{BucketID: coffer.DefaultBucketID, Prefix: "dir/"})
	must(t, err)
	if len(page.Files) != 1 || page.Files[0].Name != name {
		t.Errorf("ListFiles after rename = %v", ids(page.Files))
	}
}

func testUpdateFileErrors(t *testing.T, s meta.Store) {
	f := createNames(t, s, coffer.DefaultBucketID, "stay")[0]
	name, other := "changed", "other-key"
	bad := json.RawMessage(`"str"`)
	tests := []struct {
		name, id string
		u        coffer.FileUpdate
		want     string
	}{
		{"IfBlobKey differs", f.ID, coffer.FileUpdate{Name: &name, IfBlobKey: &other}, coffer.EABORTED},
		{"missing", coffer.NewFileID(), coffer.FileUpdate{Name: &name}, coffer.ENOTFOUND},
		{"id not a uuid", "nope", coffer.FileUpdate{Name: &name}, coffer.ENOTFOUND},
		{"metadata not an object", f.ID, coffer.FileUpdate{Metadata: &bad}, coffer.EINVALID},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.UpdateFile(t.Context(), tt.id, tt.u)
			wantCode(t, err, tt.want)
			got, err := s.GetFile(t.Context(), f.ID)
			must(t, err)
			checkFile(t, got, f)
		})
	}
}

func testDeleteFile(t *testing.T, s meta.Store) {
	ctx := t.Context()
	f := createNames(t, s, coffer.DefaultBucketID, "gone")[0]
	pending := newFile(coffer.DefaultBucketID, "pending")
	must(t, s.BeginUpload(ctx, pending.BlobKey, pending))
	for _, want := range []*coffer.File{f, pending} {
		got, err := s.DeleteFile(ctx, want.ID)
		must(t, err)
		checkFile(t, got, want)
		_, err = s.GetFile(ctx, want.ID)
		wantCode(t, err, coffer.ENOTFOUND)
		_, err = s.DeleteFile(ctx, want.ID)
		wantCode(t, err, coffer.ENOTFOUND)
	}
	_, err := s.DeleteFile(ctx, "not-a-uuid")
	wantCode(t, err, coffer.ENOTFOUND)
	if ref, err := s.BlobReferenced(ctx, f.BlobKey); err != nil || ref {
		t.Errorf("BlobReferenced(deleted file's key) = %v, %v", ref, err)
	}
}

// testMetadata checks that metadata comes back byte for byte as sent, compacted.
func testMetadata(t *testing.T, s meta.Store) {
	tests := []struct {
		name     string
		in, want string
	}{
		{"nil", "", "{}"},
		{"null", "null", "{}"},
		{"empty object", " { } ", "{}"},
		{"nested", `{"a":{"b":[1,2,{"c":null,"d":false}],"e":"f"},"g":[]}`, ""},
		{"unicode", `{"名前":"héllo 👋","esc":"\u00e9\n\t\"q\" \\ </script>","zwj":"👩‍👩‍👧"}`, ""},
		{"numbers", `{"big":12345678901234567890,"neg":-7,"dec":1.25,"zero":0,"scale":1.50,"exp":1E2}`, ""},
		{"key order", `{"zz":1,"a":2,"mm":{"y":1,"b":2}}`, ""},
		{"spaced", "{\n  \"k\" : 1 ,\"j\":\"v\"\n}", `{"k":1,"j":"v"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := tt.want
			if want == "" {
				want = tt.in
			}
			f := newFile(coffer.DefaultBucketID, tt.name)
			f.Metadata = json.RawMessage(tt.in)
			create(t, s, f)
			got, err := s.GetFile(t.Context(), f.ID)
			must(t, err)
			if string(got.Metadata) != want || string(f.Metadata) != want {
				t.Errorf("metadata %s stored as %s (returned %s), want %s", tt.in, got.Metadata, f.Metadata, want)
			}
			md := json.RawMessage(want)
			upd, err := s.UpdateFile(t.Context(), f.ID, coffer.FileUpdate{Metadata: &md})
			must(t, err)
			if got, _ := s.GetFile(t.Context(), f.ID); string(got.Metadata) != want || string(upd.Metadata) != want {
				t.Errorf("metadata after update = %s, want %s", got.Metadata, want)
			}
		})
	}
}

func testTimestamps(t *testing.T, s meta.Store) {
	ctx := t.Context()
	local := time.FixedZone("X", 5*3600)
	start := time.Now().In(local)
	b := mustBucket(t, s, "times")
	f := newFile("times", "t")
	create(t, s, f)
	end := time.Now()
	gb, err := s.GetBucket(ctx, "times")
	must(t, err)
	gf, err := s.GetFile(ctx, f.ID)
	must(t, err)
	for what, tm := range map[string]time.Time{
		"bucket CreatedAt": b.CreatedAt, "stored bucket UpdatedAt": gb.UpdatedAt,
		"file CreatedAt": f.CreatedAt, "stored file UpdatedAt": gf.UpdatedAt,
	} {
		checkTime(t, what, tm)
		if tm.Before(start.Add(-time.Microsecond)) || tm.After(end) {
			t.Errorf("%s = %v, not within [%v, %v]", what, tm, start, end)
		}
	}
	if !gb.CreatedAt.Equal(b.CreatedAt) || !gf.CreatedAt.Equal(f.CreatedAt) {
		t.Errorf("stored times differ from returned ones")
	}
}

func testListNotUploaded(t *testing.T, s meta.Store) {
	ctx := t.Context()
	var pending []*coffer.File
	for _, name := range []string{"p1", "p2", "p3"} {
		f := newFile(coffer.DefaultBucketID, name)
		must(t, s.BeginUpload(ctx, f.BlobKey, f))
		pending = append(pending, f)
		time.Sleep(2 * time.Millisecond)
	}
	createNames(t, s, coffer.DefaultBucketID, "done")
	for _, tt := range []struct{ limit, want int }{{10, 3}, {2, 2}, {0, 3}} {
		got, err := s.ListNotUploaded(ctx, tt.limit)
		must(t, err)
		if want := ids(pending[:tt.want]); !slices.Equal(ids(got), want) {
			t.Errorf("ListNotUploaded(%d) = %v, want %v (oldest first)", tt.limit, ids(got), want)
		}
		for i, f := range got {
			checkFile(t, f, pending[i])
		}
	}
}

func testEachFile(t *testing.T, s meta.Store) {
	ctx := t.Context()
	names := make([]string, 300) // more than one batch in the SQL stores
	for i := range names {
		names[i] = "n"
	}
	files := createNames(t, s, coffer.DefaultBucketID, names...)
	pending := newFile(coffer.DefaultBucketID, "pending")
	must(t, s.BeginUpload(ctx, pending.BlobKey, pending))
	files = append(files, pending)
	want := ids(files)
	slices.Sort(want)
	var got []string
	err := s.EachFile(ctx, func(f *coffer.File) error {
		got = append(got, f.ID)
		_, err := s.GetFile(ctx, f.ID) // fn may use the store
		return err
	})
	must(t, err)
	if !slices.Equal(got, want) {
		t.Fatalf("EachFile visited %d files (in order: %v), want %d in id order", len(got), slices.IsSorted(got), len(want))
	}
	stop := errors.New("stop")
	n := 0
	err = s.EachFile(ctx, func(*coffer.File) error {
		if n++; n == 3 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || n != 3 {
		t.Errorf("EachFile returned %v after %d calls, want the fn error after 3", err, n)
	}
}
