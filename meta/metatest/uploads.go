package metatest

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/meta"
)

var uploadTests = []test{
	{"Upload/BeginWithFile", testBeginWithFile},
	{"Upload/BeginErrors", testBeginErrors},
	{"Upload/Commit", testCommit},
	{"Upload/CommitErrors", testCommitErrors},
	{"Upload/ReplaceWithoutFile", testReplace},
	{"Upload/ConcurrentCommit", testConcurrentCommit},
	{"Upload/CreateFiles", testCreateFiles},
	{"Upload/CreateFilesErrors", testCreateFilesErrors},
	{"Upload/CreateOneFileErrors", testCreateOneFileErrors},
	{"Upload/Abort", testAbort},
	{"Upload/StaleIntents", testStaleIntents},
	{"Upload/BlobReferenced", testBlobReferenced},
}

func testBeginWithFile(t *testing.T, s meta.Store) {
	ctx := t.Context()
	f := newFile(coffer.DefaultBucketID, "pending.txt")
	f.IsUploaded = true // the store must record it as not uploaded
	f.ID = strings.ToUpper(f.ID)
	key := newKey()
	must(t, s.BeginUpload(ctx, key, f))
	if f.IsUploaded || f.BlobKey != key || f.ID != strings.ToLower(f.ID) {
		t.Errorf("after BeginUpload: IsUploaded=%v BlobKey=%q ID=%q, want false, %q, lower case", f.IsUploaded, f.BlobKey, key, f.ID)
	}
	checkTime(t, "CreatedAt", f.CreatedAt)
	got, err := s.GetFile(ctx, f.ID)
	must(t, err)
	checkFile(t, got, f)
	page, err := s.ListFiles(ctx, coffer.ListOptions{BucketID: coffer.DefaultBucketID})
	must(t, err)
	if len(page.Files) != 0 {
		t.Errorf("ListFiles shows a not-uploaded file: %v", ids(page.Files))
	}
	pending, err := s.ListNotUploaded(ctx, 10)
	must(t, err)
	if len(pending) != 1 || pending[0].ID != f.ID {
		t.Errorf("ListNotUploaded = %v, want [%s]", ids(pending), f.ID)
	}
	in, ok := intentKeys(t, s)[key]
	if !ok || in.FileID != f.ID {
		t.Errorf("intent for %s = %+v (found %v), want FileID %s", key, in, ok, f.ID)
	}
	ref, err := s.BlobReferenced(ctx, key)
	must(t, err)
	if !ref {
		t.Error("BlobReferenced = false for a pending upload")
	}
}

func testBeginErrors(t *testing.T, s meta.Store) {
	existing := createNames(t, s, coffer.DefaultBucketID, "exists")[0]
	busyKey := newKey()
	must(t, s.BeginUpload(t.Context(), busyKey, nil))
	tests := []struct {
		name string
		key  string
		file func() *coffer.File
		want string
	}{
		{"duplicate id", newKey(), func() *coffer.File { f := newFile("default", "b"); f.ID = existing.ID; return f }, coffer.ECONFLICT},
		{"unknown bucket", newKey(), func() *coffer.File { return newFile("nope", "b") }, coffer.ENOTFOUND},
		{"id not a uuid", newKey(), func() *coffer.File { f := newFile("default", "b"); f.ID = "abc"; return f }, coffer.EINVALID},
		{"metadata not an object", newKey(), func() *coffer.File {
			f := newFile("default", "b")
			f.Metadata = json.RawMessage(`[1]`)
			return f
		}, coffer.EINVALID},
		{"blob key in use", busyKey, func() *coffer.File { return nil }, coffer.ECONFLICT},
		{"blob key in use with file", busyKey, func() *coffer.File { return newFile("default", "b") }, coffer.ECONFLICT},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := tt.file()
			wantCode(t, s.BeginUpload(t.Context(), tt.key, f), tt.want)
			if tt.key != busyKey {
				if ref, err := s.BlobReferenced(t.Context(), tt.key); err != nil || ref {
					t.Errorf("failed BeginUpload left a reference to %s (%v)", tt.key, err)
				}
			}
			if f != nil && f.ID != existing.ID {
				_, err := s.GetFile(t.Context(), f.ID)
				wantCode(t, err, coffer.ENOTFOUND)
			}
		})
	}
	got, err := s.GetFile(t.Context(), existing.ID)
	must(t, err)
	checkFile(t, got, existing)
}

func testCommit(t *testing.T, s meta.Store) {
	ctx := t.Context()
	f := newFile(coffer.DefaultBucketID, "draft")
	key := f.BlobKey
	must(t, s.BeginUpload(ctx, key, f))
	time.Sleep(2 * time.Millisecond)
	up, size, mt, etag, name := true, int64(11), "image/png", `"etag-2"`, "final.png"
	md := json.RawMessage(`{"a":{"b":1}}`)
	before, after, err := s.CommitUpload(ctx, f.ID, key, coffer.FileUpdate{
		IsUploaded: &up, Size: &size, MimeType: &mt, ETag: &etag, Name: &name, Metadata: &md})
	must(t, err)
	checkFile(t, before, f)
	want := *f
	want.IsUploaded, want.Size, want.MimeType, want.ETag, want.Name, want.Metadata = up, size, mt, etag, name, md
	want.UpdatedAt = after.UpdatedAt
	checkFile(t, after, &want)
	if !after.UpdatedAt.After(before.UpdatedAt) {
		t.Errorf("UpdatedAt not bumped: %v -> %v", before.UpdatedAt, after.UpdatedAt)
	}
	got, err := s.GetFile(ctx, f.ID)
	must(t, err)
	checkFile(t, got, after)
	if _, ok := intentKeys(t, s)[key]; ok {
		t.Error("CommitUpload left the intent")
	}
	if ref, err := s.BlobReferenced(ctx, key); err != nil || !ref {
		t.Errorf("BlobReferenced(committed key) = %v, %v; want true", ref, err)
	}
	page, err := s.ListFiles(ctx, coffer.ListOptions{BucketID: coffer.DefaultBucketID})
	must(t, err)
	if len(page.Files) != 1 || page.Files[0].ID != f.ID {
		t.Errorf("ListFiles after commit = %v, want [%s]", ids(page.Files), f.ID)
	}
}

func testCommitErrors(t *testing.T, s meta.Store) {
	f := createNames(t, s, coffer.DefaultBucketID, "stored")[0]
	other := "other-key"
	tests := []struct {
		name, id string
		begin    bool // record an intent for the new key first
		ifKey    *string
		want     string
	}{
		{"IfBlobKey differs", f.ID, true, &other, coffer.EABORTED},
		{"file missing", coffer.NewFileID(), true, nil, coffer.ENOTFOUND},
		{"id not a uuid", "not-a-uuid", true, nil, coffer.ENOTFOUND},
		{"intent missing", f.ID, false, &f.BlobKey, coffer.EABORTED},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			key := newKey()
			if tt.begin {
				must(t, s.BeginUpload(t.Context(), key, nil))
			}
			_, _, err := s.CommitUpload(t.Context(), tt.id, key, coffer.FileUpdate{BlobKey: &key, IfBlobKey: tt.ifKey})
			wantCode(t, err, tt.want)
			got, err := s.GetFile(t.Context(), f.ID)
			must(t, err)
			checkFile(t, got, f)
			if _, ok := intentKeys(t, s)[key]; ok != tt.begin {
				t.Errorf("intent present = %v after a failed commit, want %v", ok, tt.begin)
			}
		})
	}
}

func testReplace(t *testing.T, s meta.Store) {
	ctx := t.Context()
	f := createNames(t, s, coffer.DefaultBucketID, "r.txt")[0]
	oldKey, newK := f.BlobKey, newKey()
	must(t, s.BeginUpload(ctx, newK, nil))
	in, ok := intentKeys(t, s)[newK]
	if !ok || in.FileID != "" {
		t.Fatalf("intent = %+v (found %v), want FileID \"\"", in, ok)
	}
	size, etag := int64(99), `"new"`
	before, after, err := s.CommitUpload(ctx, f.ID, newK, coffer.FileUpdate{
		Size: &size, ETag: &etag, BlobKey: &newK, IfBlobKey: &oldKey})
	must(t, err)
	checkFile(t, before, f)
	if after.BlobKey != newK || after.Size != size || after.ETag != etag || !after.IsUploaded || after.Name != f.Name {
		t.Errorf("after replace = %+v", after)
	}
	got, err := s.GetFile(ctx, f.ID)
	must(t, err)
	checkFile(t, got, after)
	for key, want := range map[string]bool{oldKey: false, newK: true} {
		if ref, err := s.BlobReferenced(ctx, key); err != nil || ref != want {
			t.Errorf("BlobReferenced(%s) = %v, %v; want %v", key, ref, err, want)
		}
	}
	if len(intentKeys(t, s)) != 0 {
		t.Error("intents left after the replace")
	}
}

func testConcurrentCommit(t *testing.T, s meta.Store) {
	for round := range 5 { // a race may not show every time
		raceCommits(t, s, fmt.Sprint("race", round))
	}
}

// raceCommits starts n replaces of one file at once, all expecting its current blob key:
// exactly one may win.
func raceCommits(t *testing.T, s meta.Store, name string) {
	f := createNames(t, s, coffer.DefaultBucketID, name)[0]
	const n = 8
	keys := make([]string, n)
	for i := range keys {
		keys[i] = newKey()
		must(t, s.BeginUpload(t.Context(), keys[i], nil))
	}
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range keys {
		wg.Go(func() {
			<-start
			_, _, errs[i] = s.CommitUpload(t.Context(), f.ID, keys[i], coffer.FileUpdate{BlobKey: &keys[i], IfBlobKey: &f.BlobKey})
		})
	}
	close(start)
	wg.Wait()
	winner := -1
	for i, err := range errs {
		switch coffer.ErrorCode(err) {
		case "":
			if winner >= 0 {
				t.Fatalf("commits %d and %d both won", winner, i)
			}
			winner = i
		case coffer.EABORTED:
		default:
			t.Errorf("commit %d: %v, want nil or EABORTED", i, err)
		}
	}
	if winner < 0 {
		t.Fatal("no commit won")
	}
	got, err := s.GetFile(t.Context(), f.ID)
	must(t, err)
	if got.BlobKey != keys[winner] {
		t.Errorf("BlobKey = %s, want the winner's %s", got.BlobKey, keys[winner])
	}
	left := 0
	for _, k := range keys {
		if _, ok := intentKeys(t, s)[k]; ok {
			left++
		}
	}
	if left != n-1 {
		t.Errorf("%d intents left, want %d (the losers')", left, n-1)
	}
}

func testCreateFiles(t *testing.T, s meta.Store) {
	ctx := t.Context()
	mustBucket(t, s, "other")
	a, b := newFile(coffer.DefaultBucketID, "a"), newFile("other", "b")
	a.UploadedByUserID = ""
	b.Metadata = nil
	start := meta.Now()
	create(t, s, a, b)
	for _, f := range []*coffer.File{a, b} {
		if !f.IsUploaded || f.CreatedAt.Before(start) || !f.UpdatedAt.Equal(f.CreatedAt) {
			t.Errorf("after CreateFiles: %+v", f)
		}
		got, err := s.GetFile(ctx, f.ID)
		must(t, err)
		checkFile(t, got, f)
	}
	if !jsonEqual(b.Metadata, []byte(`{}`)) {
		t.Errorf("nil metadata stored as %s, want {}", b.Metadata)
	}
	if len(intentKeys(t, s)) != 0 {
		t.Error("CreateFiles left intents")
	}
	must(t, s.CreateFiles(ctx, nil))
}

func testCreateFilesErrors(t *testing.T, s meta.Store) {
	existing := createNames(t, s, coffer.DefaultBucketID, "exists")[0]
	tests := []struct {
		name   string
		mutate func(bad *coffer.File, good *coffer.File)
		intent bool // record an intent for bad
		want   string
	}{
		{"id exists", func(bad, _ *coffer.File) { bad.ID = existing.ID }, true, coffer.ECONFLICT},
		{"id twice", func(bad, good *coffer.File) { bad.ID = good.ID }, true, coffer.ECONFLICT},
		{"bucket missing", func(bad, _ *coffer.File) { bad.BucketID = "nope" }, true, coffer.ENOTFOUND},
		{"intent missing", func(bad, _ *coffer.File) {}, false, coffer.EABORTED},
		{"same blob key twice", func(bad, good *coffer.File) { bad.BlobKey = good.BlobKey }, false, coffer.EABORTED},
		{"id not a uuid", func(bad, _ *coffer.File) { bad.ID = "x" }, true, coffer.EINVALID},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			good, bad := newFile(coffer.DefaultBucketID, "good"), newFile(coffer.DefaultBucketID, "bad")
			tt.mutate(bad, good)
			must(t, s.BeginUpload(t.Context(), good.BlobKey, nil))
			if tt.intent {
				must(t, s.BeginUpload(t.Context(), bad.BlobKey, nil))
			}
			wantCode(t, s.CreateFiles(t.Context(), []*coffer.File{good, bad}), tt.want)
			_, err := s.GetFile(t.Context(), good.ID)
			wantCode(t, err, coffer.ENOTFOUND)
			if _, ok := intentKeys(t, s)[good.BlobKey]; !ok {
				t.Error("a failed CreateFiles removed an intent")
			}
		})
	}
	page, err := s.ListFiles(t.Context(), coffer.ListOptions{BucketID: coffer.DefaultBucketID})
	must(t, err)
	if len(page.Files) != 1 {
		t.Errorf("files visible after failed CreateFiles: %v", ids(page.Files))
	}
}

// testCreateOneFileErrors checks CreateFiles of a single file (PostgreSQL commits it in
// one statement, without a transaction): the same errors in the same order as in a
// transaction (a taken id or a missing bucket before a missing intent), and nothing
// written.
func testCreateOneFileErrors(t *testing.T, s meta.Store) {
	existing := createNames(t, s, coffer.DefaultBucketID, "exists")[0]
	tests := []struct {
		name   string
		mutate func(f *coffer.File)
		intent bool // record an intent for f
		want   string
	}{
		{"id exists", func(f *coffer.File) { f.ID = existing.ID }, true, coffer.ECONFLICT},
		{"id exists, intent missing", func(f *coffer.File) { f.ID = existing.ID }, false, coffer.ECONFLICT},
		{"bucket missing", func(f *coffer.File) { f.BucketID = "nope" }, true, coffer.ENOTFOUND},
		{"bucket missing, intent missing", func(f *coffer.File) { f.BucketID = "nope" }, false, coffer.ENOTFOUND},
		{"intent missing", func(f *coffer.File) {}, false, coffer.EABORTED},
		{"intent of an uploaded file's blob", func(f *coffer.File) { f.BlobKey = existing.BlobKey }, false, coffer.EABORTED},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFile(coffer.DefaultBucketID, "alone")
			tt.mutate(f)
			if tt.intent {
				must(t, s.BeginUpload(t.Context(), f.BlobKey, nil))
			}
			wantCode(t, s.CreateFiles(t.Context(), []*coffer.File{f}), tt.want)
			if _, ok := intentKeys(t, s)[f.BlobKey]; ok != tt.intent {
				t.Errorf("intent there: %v, want %v (a failed CreateFiles keeps it)", ok, tt.intent)
			}
			got, err := s.GetFile(t.Context(), f.ID)
			if f.ID == existing.ID {
				must(t, err)
				checkFile(t, got, existing)
			} else {
				wantCode(t, err, coffer.ENOTFOUND)
			}
		})
	}
	page, err := s.ListFiles(t.Context(), coffer.ListOptions{BucketID: coffer.DefaultBucketID})
	must(t, err)
	if len(page.Files) != 1 {
		t.Errorf("files visible after failed CreateFiles: %v", ids(page.Files))
	}
}

func testAbort(t *testing.T, s meta.Store) {
	ctx := t.Context()
	pending := newFile(coffer.DefaultBucketID, "pending")
	must(t, s.BeginUpload(ctx, pending.BlobKey, pending))
	uploaded := createNames(t, s, coffer.DefaultBucketID, "uploaded")[0]
	must(t, s.BeginUpload(ctx, uploaded.BlobKey, nil)) // a stray intent for an uploaded row's key
	bare := newKey()
	must(t, s.BeginUpload(ctx, bare, nil))
	for _, key := range []string{pending.BlobKey, uploaded.BlobKey, bare, "never-begun"} {
		must(t, s.AbortUpload(ctx, key))
		must(t, s.AbortUpload(ctx, key)) // idempotent
	}
	_, err := s.GetFile(ctx, pending.ID)
	wantCode(t, err, coffer.ENOTFOUND)
	got, err := s.GetFile(ctx, uploaded.ID)
	must(t, err)
	checkFile(t, got, uploaded)
	if in := intentKeys(t, s); len(in) != 0 {
		t.Errorf("intents left after abort: %v", in)
	}
	for key, want := range map[string]bool{pending.BlobKey: false, bare: false, uploaded.BlobKey: true} {
		if ref, err := s.BlobReferenced(ctx, key); err != nil || ref != want {
			t.Errorf("BlobReferenced(%s) = %v, %v; want %v", key, ref, err, want)
		}
	}
}

func testStaleIntents(t *testing.T, s meta.Store) {
	ctx := t.Context()
	start := meta.Now()
	f := newFile(coffer.DefaultBucketID, "x")
	must(t, s.BeginUpload(ctx, f.BlobKey, f))
	bare := newKey()
	must(t, s.BeginUpload(ctx, bare, nil))
	old, err := s.StaleIntents(ctx, start.Add(-time.Hour))
	must(t, err)
	if len(old) != 0 {
		t.Errorf("StaleIntents(an hour ago) = %v, want none", old)
	}
	end := time.Now()
	all, err := s.StaleIntents(ctx, end.Add(time.Millisecond))
	must(t, err)
	if len(all) != 2 {
		t.Fatalf("StaleIntents(now) = %v, want 2 intents", all)
	}
	for _, in := range all {
		checkTime(t, "intent CreatedAt", in.CreatedAt)
		if in.CreatedAt.Before(start) || in.CreatedAt.After(end) {
			t.Errorf("intent CreatedAt %v not within [%v, %v]", in.CreatedAt, start, end)
		}
		if want := map[string]string{f.BlobKey: f.ID, bare: ""}[in.BlobKey]; in.FileID != want {
			t.Errorf("intent %s FileID = %q, want %q", in.BlobKey, in.FileID, want)
		}
	}
}

func testBlobReferenced(t *testing.T, s meta.Store) {
	f := createNames(t, s, coffer.DefaultBucketID, "x")[0]
	intent := newKey()
	must(t, s.BeginUpload(t.Context(), intent, nil))
	for _, tt := range []struct {
		name, key string
		want      bool
	}{
		{"file row", f.BlobKey, true},
		{"intent", intent, true},
		{"none", newKey(), false},
		{"like pattern", "test/%", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ref, err := s.BlobReferenced(t.Context(), tt.key)
			must(t, err)
			if ref != tt.want {
				t.Errorf("BlobReferenced(%q) = %v, want %v", tt.key, ref, tt.want)
			}
		})
	}
}
