package metatest

import (
	"reflect"
	"testing"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/meta"
)

var bucketTests = []test{
	{"Bucket/DefaultExists", testDefaultBucket},
	{"Rules/PutGet", testRules},
	{"Bucket/CreateGet", testCreateBucket},
	{"Bucket/CreateConflict", testCreateBucketConflict},
	{"Bucket/GetMissing", testGetBucketMissing},
	{"Bucket/ListOrdered", testListBuckets},
	{"Bucket/Update", testUpdateBucket},
	{"Bucket/UpdateMissing", testUpdateBucketMissing},
	{"Bucket/Delete", testDeleteBucket},
}

// checkBucket compares settings (nil and empty AllowedMimeTypes are equal) and times.
func checkBucket(t *testing.T, got, want *coffer.Bucket, times bool) {
	t.Helper()
	g, w := *got, *want
	checkTime(t, "bucket CreatedAt", g.CreatedAt)
	checkTime(t, "bucket UpdatedAt", g.UpdatedAt)
	if times && (!g.CreatedAt.Equal(w.CreatedAt) || !g.UpdatedAt.Equal(w.UpdatedAt)) {
		t.Errorf("bucket %s times = %v/%v, want %v/%v", w.ID, g.CreatedAt, g.UpdatedAt, w.CreatedAt, w.UpdatedAt)
	}
	if len(g.AllowedMimeTypes) == 0 && len(w.AllowedMimeTypes) == 0 {
		g.AllowedMimeTypes, w.AllowedMimeTypes = nil, nil
	}
	g.CreatedAt, g.UpdatedAt, w.CreatedAt, w.UpdatedAt = time.Time{}, time.Time{}, time.Time{}, time.Time{}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("bucket = %+v\nwant     %+v", g, w)
	}
}

func testDefaultBucket(t *testing.T, s meta.Store) {
	b, err := s.GetBucket(t.Context(), coffer.DefaultBucketID)
	must(t, err)
	checkBucket(t, b, coffer.NewBucket(coffer.DefaultBucketID), false)
	list, err := s.ListBuckets(t.Context())
	must(t, err)
	if len(list) != 1 || list[0].ID != coffer.DefaultBucketID {
		t.Fatalf("ListBuckets on a fresh store = %v, want only %q", list, coffer.DefaultBucketID)
	}
}

func testCreateBucket(t *testing.T, s meta.Store) {
	full := &coffer.Bucket{
		ID: "full.bucket_1-x", MinUploadFileSize: 0, MaxUploadFileSize: 1 << 40,
		AllowedMimeTypes: []string{"image/*", "text/plain", "application/vnd.api+json"},
		CacheControl:     "public, max-age=60", DownloadExpiration: 604800,
		PresignedURLsEnabled: false, Public: true, AllowInline: true, CacheControlShared: true,
	}
	for _, b := range []*coffer.Bucket{full, coffer.NewBucket("plain")} {
		t.Run(b.ID, func(t *testing.T) {
			start := meta.Now()
			must(t, s.CreateBucket(t.Context(), b))
			checkTime(t, "CreatedAt", b.CreatedAt)
			if b.CreatedAt.Before(start) || !b.UpdatedAt.Equal(b.CreatedAt) {
				t.Errorf("CreatedAt/UpdatedAt = %v/%v, want equal and >= %v", b.CreatedAt, b.UpdatedAt, start)
			}
			got, err := s.GetBucket(t.Context(), b.ID)
			must(t, err)
			checkBucket(t, got, b, true)
		})
	}
}

func testCreateBucketConflict(t *testing.T, s meta.Store) {
	orig := mustBucket(t, s, "dup")
	again := coffer.NewBucket("dup")
	again.Public = true
	wantCode(t, s.CreateBucket(t.Context(), again), coffer.ECONFLICT)
	wantCode(t, s.CreateBucket(t.Context(), coffer.NewBucket(coffer.DefaultBucketID)), coffer.ECONFLICT)
	got, err := s.GetBucket(t.Context(), "dup")
	must(t, err)
	checkBucket(t, got, orig, true)
}

func testGetBucketMissing(t *testing.T, s meta.Store) {
	_, err := s.GetBucket(t.Context(), "nope")
	wantCode(t, err, coffer.ENOTFOUND)
}

func testListBuckets(t *testing.T, s meta.Store) {
	for _, id := range []string{"b", "c1", "a", "c-0"} {
		mustBucket(t, s, id)
	}
	list, err := s.ListBuckets(t.Context())
	must(t, err)
	var got []string
	for _, b := range list {
		got = append(got, b.ID)
		checkTime(t, "CreatedAt", b.CreatedAt)
	}
	want := []string{"a", "b", "c-0", "c1", "default"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("ListBuckets ids = %v, want %v", got, want)
	}
}

func testUpdateBucket(t *testing.T, s meta.Store) {
	orig := coffer.NewBucket("upd")
	orig.AllowedMimeTypes = []string{"image/*"}
	must(t, s.CreateBucket(t.Context(), orig))
	time.Sleep(2 * time.Millisecond)
	pub, maxSize, cc, types := true, int64(1234), "no-store", []string{"video/mp4", "image/png"}
	got, err := s.UpdateBucket(t.Context(), "upd", coffer.BucketUpdate{
		Public: &pub, MaxUploadFileSize: &maxSize, CacheControl: &cc, AllowedMimeTypes: &types, CacheControlShared: &pub})
	must(t, err)
	want := *orig
	want.Public, want.MaxUploadFileSize, want.CacheControl, want.AllowedMimeTypes = pub, maxSize, cc, types
	want.CacheControlShared = true
	checkBucket(t, got, &want, false)
	if !got.CreatedAt.Equal(orig.CreatedAt) || !got.UpdatedAt.After(orig.UpdatedAt) {
		t.Errorf("times after update = %v/%v, want CreatedAt %v and a later UpdatedAt", got.CreatedAt, got.UpdatedAt, orig.CreatedAt)
	}
	stored, err := s.GetBucket(t.Context(), "upd")
	must(t, err)
	checkBucket(t, stored, got, true)

	empty := []string{}
	got, err = s.UpdateBucket(t.Context(), "upd", coffer.BucketUpdate{AllowedMimeTypes: &empty})
	must(t, err)
	want.AllowedMimeTypes = nil
	checkBucket(t, got, &want, false)
	stored, err = s.GetBucket(t.Context(), "upd")
	must(t, err)
	checkBucket(t, stored, got, true)
}

func testUpdateBucketMissing(t *testing.T, s meta.Store) {
	pub := true
	_, err := s.UpdateBucket(t.Context(), "nope", coffer.BucketUpdate{Public: &pub})
	wantCode(t, err, coffer.ENOTFOUND)
}

func testDeleteBucket(t *testing.T, s meta.Store) {
	tests := []struct {
		name  string
		setup func(t *testing.T, id string) (cleanup func())
		want  string
	}{
		{"empty", func(t *testing.T, id string) func() { mustBucket(t, s, id); return nil }, ""},
		{"missing", func(t *testing.T, id string) func() { return nil }, coffer.ENOTFOUND},
		{"uploaded file", func(t *testing.T, id string) func() {
			mustBucket(t, s, id)
			f := createNames(t, s, id, "x")[0]
			return func() { _, err := s.DeleteFile(t.Context(), f.ID); must(t, err) }
		}, coffer.EINUSE},
		{"not uploaded file", func(t *testing.T, id string) func() {
			mustBucket(t, s, id)
			f := newFile(id, "x")
			must(t, s.BeginUpload(t.Context(), f.BlobKey, f))
			return func() { must(t, s.AbortUpload(t.Context(), f.BlobKey)) }
		}, coffer.EINUSE},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := "del" + string(rune('a'+i))
			cleanup := tt.setup(t, id)
			wantCode(t, s.DeleteBucket(t.Context(), id), tt.want)
			if tt.want == coffer.EINUSE {
				_, err := s.GetBucket(t.Context(), id)
				must(t, err)
				cleanup()
				must(t, s.DeleteBucket(t.Context(), id))
			}
			_, err := s.GetBucket(t.Context(), id)
			wantCode(t, err, coffer.ENOTFOUND)
		})
	}
}

func testRules(t *testing.T, s meta.Store) {
	_, err := s.GetRules(t.Context())
	wantCode(t, err, coffer.ENOTFOUND)
	for _, doc := range []string{`{"rules":[]}`, `{"rules":[{"role":"user","buckets":["b"],"read":{}}]}`} {
		must(t, s.PutRules(t.Context(), []byte(doc)))
		got, err := s.GetRules(t.Context())
		must(t, err)
		if string(got) != doc {
			t.Fatalf("GetRules = %s, want %s", got, doc)
		}
	}
}
