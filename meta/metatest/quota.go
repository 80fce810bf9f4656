package metatest

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/meta"
)

// quotaTenant registers tenant "q" with quota and returns its view.
func quotaTenant(t *testing.T, s Shared, quota coffer.Quota) scoped {
	t.Helper()
	must(t, s.CreateTenant(t.Context(), &coffer.Tenant{ID: "q", Quota: quota}))
	return view(t, s, "q")
}

// raceUploads commits n one-file uploads of size bytes at once on v and returns how
// many committed and the errors of the others.
func raceUploads(t *testing.T, v scoped, n int, size int64) (int, []error) {
	t.Helper()
	files := make([]*coffer.File, n)
	for i := range files {
		files[i] = newFile(coffer.DefaultBucketID, "f")
		files[i].Size = size
		must(t, v.BeginUpload(t.Context(), files[i].BlobKey, nil))
	}
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i, f := range files {
		wg.Go(func() {
			<-start
			errs[i] = v.CreateFiles(t.Context(), []*coffer.File{f})
		})
	}
	close(start)
	wg.Wait()
	ok, failed := 0, []error{}
	for _, err := range errs {
		if err == nil {
			ok++
		} else {
			failed = append(failed, err)
		}
	}
	return ok, failed
}

// checkQuotaErrors fails t unless every error is EQUOTA with a message naming the
// quota ("... of <limit> <unit>").
func checkQuotaErrors(t *testing.T, errs []error, limit string) {
	t.Helper()
	for _, err := range errs {
		wantCode(t, err, coffer.EQUOTA)
		msg := err.Error()
		if !strings.Contains(msg, "tenant storage quota exceeded: ") || !strings.Contains(msg, " of "+limit) {
			t.Fatalf("quota error %q: want it to say the quota was exceeded and name %q", msg, limit)
		}
	}
}

// raceQuota runs raceUploads and fails t unless exactly want committed and every
// other upload failed with EQUOTA naming limit.
func raceQuota(t *testing.T, v scoped, n int, size int64, want int, limit string) {
	t.Helper()
	ok, errs := raceUploads(t, v, n, size)
	if ok != want {
		t.Errorf("%d of %d uploads committed under a quota of %s, want %d", ok, n, limit, want)
	}
	checkQuotaErrors(t, errs, limit)
}

// testQuotaConcurrent: 50 concurrent commits of 100 bytes against a quota of 1000
// bytes: exactly 10 commit, the rest fail with EQUOTA, and usage is exact; the default
// tenant has no quota.
func testQuotaConcurrent(t *testing.T, s Shared) {
	v := quotaTenant(t, s, coffer.Quota{MaxBytes: 1000})
	raceQuota(t, v, 50, 100, 10, "1000 bytes")
	if u := checkUsage(t, v); u != (coffer.Usage{Bytes: 1000, Files: 10}) {
		t.Errorf("usage %+v", u)
	}
	raceQuota(t, s.ForTenant(coffer.DefaultTenantID).(scoped), 20, 100, 20, "none")
}

// testQuotaFiles: the file-count quota, a zero quota meaning none, and a quota set
// again over what was counted without one (counted apart by some stores).
func testQuotaFiles(t *testing.T, s Shared) {
	v := quotaTenant(t, s, coffer.Quota{MaxFiles: 3})
	raceQuota(t, v, 8, 0, 3, "3 files")
	none := coffer.Quota{}
	_, err := s.UpdateTenant(t.Context(), "q", coffer.TenantUpdate{Quota: &none})
	must(t, err)
	raceQuota(t, v, 20, 10, 20, "none")
	checkUsage(t, v)
	again := coffer.Quota{MaxFiles: 25}
	_, err = s.UpdateTenant(t.Context(), "q", coffer.TenantUpdate{Quota: &again})
	must(t, err)
	raceQuota(t, v, 10, 10, 2, "25 files")
	if u := checkUsage(t, v); u.Files != 25 {
		t.Errorf("usage %+v, want 25 files", u)
	}
}

// testQuotaRefusalChangesNothing: a create, a replace and a named put that would pass
// the quota fail with EQUOTA and change nothing (the intent stays, the old content
// stays); a shrinking change passes even over a quota lowered since.
func testQuotaRefusalChangesNothing(t *testing.T, s Shared) {
	ctx := t.Context()
	v := quotaTenant(t, s, coffer.Quota{MaxBytes: 10})
	f := newFile(coffer.DefaultBucketID, "f") // 3 bytes
	create(t, v, f)
	big := newFile(coffer.DefaultBucketID, "big")
	big.Size = 8
	must(t, v.BeginUpload(ctx, big.BlobKey, nil))
	checkQuotaErrors(t, []error{v.CreateFiles(ctx, []*coffer.File{big})}, "10 bytes")
	if _, ok := intentKeys(t, v)[big.BlobKey]; !ok {
		t.Error("a refused create removed its intent")
	}
	_, err := v.GetFile(ctx, big.ID)
	wantCode(t, err, coffer.ENOTFOUND)
	key, size := newKey(), int64(11)
	must(t, v.BeginUpload(ctx, key, nil))
	_, _, err = v.CommitUpload(ctx, f.ID, key, coffer.FileUpdate{Size: &size, BlobKey: &key})
	checkQuotaErrors(t, []error{err}, "10 bytes")
	got, err := v.GetFile(ctx, f.ID)
	must(t, err)
	checkFile(t, got, f)
	named := newFile(coffer.DefaultBucketID, "named")
	named.Size = 9
	must(t, v.BeginUpload(ctx, named.BlobKey, nil))
	_, _, err = v.PutFileByName(ctx, named, meta.Precondition{})
	checkQuotaErrors(t, []error{err}, "10 bytes")
	lower := coffer.Quota{MaxBytes: 1}
	_, err = s.UpdateTenant(ctx, "q", coffer.TenantUpdate{Quota: &lower})
	must(t, err)
	size = 2
	_, _, err = v.CommitUpload(ctx, f.ID, key, coffer.FileUpdate{Size: &size, BlobKey: &key})
	must(t, err) // shrinks: passes although 2 > 1
	if u := checkUsage(t, v); u != (coffer.Usage{Bytes: 2, Files: 1}) {
		t.Errorf("usage %+v", u)
	}
	_, err = v.DeleteFile(ctx, f.ID)
	must(t, err)
	checkUsage(t, v)
}

// testUsageExact runs a random mix of every change to files (creates, replaces of
// another size, named creates and replaces, renames, deletes, aborted and pending
// uploads, purge batches) and checks after each that usage is exactly the sum of
// the tenant's uploaded files, and that the default tenant's is untouched.
func testUsageExact(t *testing.T, s Shared) {
	ctx := t.Context()
	mustTenant(t, s, "u")
	mustDeleting(t, s, "u") // PurgeTenant needs it; the store serves the tenant's view all the same
	v := view(t, s, "u")
	def := s.ForTenant(coffer.DefaultTenantID).(scoped)
	create(t, def, newFile(coffer.DefaultBucketID, "d"))
	defUsage := checkUsage(t, def)
	r := rand.New(rand.NewPCG(19, 19))
	var live []*coffer.File
	for i := range 120 {
		live = usageStep(t, v, r, live)
		checkUsage(t, v)
		if i%40 == 39 {
			_, _, err := s.PurgeTenant(ctx, "u", 2)
			must(t, err)
			checkUsage(t, v)
			live = liveFiles(t, v)
		}
	}
	if u := checkUsage(t, def); u != defUsage {
		t.Errorf("default tenant's usage changed: %+v, was %+v", u, defUsage)
	}
}

// liveFiles returns v's uploaded files.
func liveFiles(t *testing.T, v scoped) []*coffer.File {
	t.Helper()
	var out []*coffer.File
	must(t, v.EachFile(t.Context(), func(f *coffer.File) error {
		if f.IsUploaded {
			out = append(out, f)
		}
		return nil
	}))
	return out
}

// usageStep makes one random change on v and returns the uploaded files after it.
func usageStep(t *testing.T, v scoped, r *rand.Rand, live []*coffer.File) []*coffer.File {
	t.Helper()
	ctx := t.Context()
	size := r.Int64N(1000)
	pick := func() *coffer.File { return live[r.IntN(len(live))] }
	switch op := r.IntN(7); {
	case op == 0 || len(live) == 0: // create
		f := newFile(coffer.DefaultBucketID, "c")
		f.Size = size
		create(t, v, f)
	case op == 1: // replace with another size
		key, f := newKey(), pick()
		must(t, v.BeginUpload(ctx, key, nil))
		_, _, err := v.CommitUpload(ctx, f.ID, key, coffer.FileUpdate{Size: &size, BlobKey: &key})
		must(t, err)
	case op == 2: // named create or replace
		f := newFile(coffer.DefaultBucketID, "named-"+string(rune('a'+r.IntN(3))))
		f.Size = size
		must(t, v.BeginUpload(ctx, f.BlobKey, nil))
		_, _, err := v.PutFileByName(ctx, f, meta.Precondition{})
		must(t, err)
	case op == 3: // delete
		_, err := v.DeleteFile(ctx, pick().ID)
		must(t, err)
	case op == 4: // rename and new metadata (no size change)
		name, md := "renamed-"+coffer.NewFileID(), json.RawMessage(`{"n":1}`) // named files' names are unique
		_, err := v.UpdateFile(ctx, pick().ID, coffer.FileUpdate{Metadata: &md, Name: &name})
		must(t, err)
	case op == 5: // a pending upload, then committed or aborted
		f := newFile(coffer.DefaultBucketID, "p")
		must(t, v.BeginUpload(ctx, f.BlobKey, f))
		if r.IntN(2) == 0 {
			must(t, v.AbortUpload(ctx, f.BlobKey))
			break
		}
		up := true
		_, _, err := v.CommitUpload(ctx, f.ID, f.BlobKey, coffer.FileUpdate{IsUploaded: &up, Size: &size})
		must(t, err)
	default: // a size change through UpdateFile
		_, err := v.UpdateFile(ctx, pick().ID, coffer.FileUpdate{Size: &size})
		must(t, err)
	}
	return liveFiles(t, v)
}
