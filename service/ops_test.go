package service_test

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/blob"
	"github.com/coffer/coffer/blob/memblob"
	"github.com/coffer/coffer/imaging"
	"github.com/coffer/coffer/meta/sqlite"
	"github.com/coffer/coffer/service"
)

// crashState builds the leftovers of a crash: a new upload and a replace cut off after
// their blobs were written, an old blob a finished replace did not get to delete, and
// one healthy file.
func crashState(t *testing.T, singleNode bool) (*service.Service, *blob.Store, *sqlite.Store, string) {
	t.Helper()
	ctx := context.Background()
	m, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "c.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	if err := m.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	blobs := blob.New(memblob.New())
	put := func(key string) {
		if _, err := blobs.Put(ctx, key, strings.NewReader("data"), 4); err != nil {
			t.Fatal(err)
		}
	}
	half := &coffer.File{ID: coffer.NewFileID(), BucketID: "default", Name: "half.txt"}
	must(t, m.BeginUpload(ctx, "f/aa/new", half))
	put("f/aa/new")
	must(t, m.BeginUpload(ctx, "f/bb/replace", nil))
	put("f/bb/replace")
	put("f/cc/old")
	good := &coffer.File{ID: coffer.NewFileID(), BucketID: "default", Name: "good.txt", Size: 4, BlobKey: "f/dd/good", Metadata: []byte("{}")}
	must(t, m.BeginUpload(ctx, "f/dd/good", nil))
	put("f/dd/good")
	must(t, m.CreateFiles(ctx, []*coffer.File{good}))
	cfg := service.DefaultConfig()
	cfg.SingleNode = singleNode
	svc, err := service.New(cfg, m, blobs, service.Caches{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	return svc, blobs, m, good.ID
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func keys(t *testing.T, b *blob.Store) string {
	var ks []string
	must(t, b.List(context.Background(), "", func(a blob.Attrs) error { ks = append(ks, a.Key); return nil }))
	return strings.Join(ks, " ")
}

func TestStartupSweepSingleNode(t *testing.T) {
	svc, blobs, m, goodID := crashState(t, true)
	rep, err := svc.StartupSweep(context.Background())
	must(t, err)
	if rep.AbandonedUploads != 2 || len(rep.OrphanBlobs) != 3 {
		t.Fatalf("report %+v", rep)
	}
	if got := keys(t, blobs); got != "f/dd/good" {
		t.Fatalf("blobs left: %s", got)
	}
	if nu, _ := m.ListNotUploaded(context.Background(), 10); len(nu) != 0 {
		t.Fatalf("not-uploaded rows left: %d", len(nu))
	}
	if _, err := m.GetFile(context.Background(), goodID); err != nil {
		t.Fatalf("healthy file lost: %v", err)
	}
}

func TestStartupSweepSharedKeepsFreshUploads(t *testing.T) {
	svc, blobs, _, _ := crashState(t, false)
	rep, err := svc.StartupSweep(context.Background())
	must(t, err)
	// Uploads younger than StaleUploadAfter may still be running on another node.
	if rep.AbandonedUploads != 0 || strings.Join(rep.OrphanBlobs, " ") != "f/cc/old" {
		t.Fatalf("report %+v", rep)
	}
	if got := keys(t, blobs); got != "f/aa/new f/bb/replace f/dd/good" {
		t.Fatalf("blobs left: %s", got)
	}
	rep, err = svc.Sweep(context.Background(), time.Now().Add(time.Second))
	must(t, err)
	if rep.AbandonedUploads != 2 || keys(t, blobs) != "f/dd/good" {
		t.Fatalf("second sweep %+v, blobs %s", rep, keys(t, blobs))
	}
}

// The admin's view of what a crash left: ListOrphans names only blobs nothing
// references (not those of uploads in progress, nor a live file's image variants);
// DeleteOrphans removes exactly those; ListNotUploaded names the half-uploaded file.
func TestOrphansAndNotUploaded(t *testing.T) {
	ctx := context.Background()
	svc, blobs, _, goodID := crashState(t, false)
	admin := coffer.AdminPrincipal()
	live, gone := imaging.VariantKey(goodID, `"e"`, "w=10"), imaging.VariantKey(coffer.NewFileID(), `"e"`, "w=10")
	for _, key := range []string{live, gone} {
		if _, err := blobs.Put(ctx, key, strings.NewReader("v"), 1); err != nil {
			t.Fatal(err)
		}
	}
	for name, err := range map[string]error{
		"orphans":      second(svc.ListOrphans(ctx, user("u1"))),
		"delete":       second(svc.DeleteOrphans(ctx, user("u1"))),
		"not uploaded": second(svc.ListNotUploaded(ctx, user("u1"))),
		"broken":       second(svc.ListBrokenMetadata(ctx, user("u1"))),
	} {
		wantCode(t, name+" as a user", err, coffer.EFORBIDDEN)
	}
	orphans, err := svc.ListOrphans(ctx, admin)
	must(t, err)
	if !slices.Equal(orphans, []string{"f/cc/old", gone}) {
		t.Fatalf("orphans %q, want f/cc/old and the missing file's variant", orphans)
	}
	nu, err := svc.ListNotUploaded(ctx, admin)
	must(t, err)
	if len(nu) != 1 || nu[0].Name != "half.txt" || nu[0].IsUploaded {
		t.Fatalf("not uploaded: %d files", len(nu))
	}
	wantCode(t, "reading the half-uploaded file", third(svc.GetFile(ctx, admin, nu[0].ID)), coffer.ENOTFOUND)
	deleted, err := svc.DeleteOrphans(ctx, admin)
	must(t, err)
	if !slices.Equal(deleted, orphans) {
		t.Fatalf("deleted %q, listed %q", deleted, orphans)
	}
	if got := keys(t, blobs); got != "f/aa/new f/bb/replace f/dd/good "+live {
		t.Fatalf("blobs left: %s", got)
	}
	if again, err := svc.ListOrphans(ctx, admin); err != nil || len(again) != 0 {
		t.Fatalf("orphans after the delete: %q, %v", again, err)
	}
}

// A file row whose blob is gone is broken metadata: listed, and deleted unless the
// file got a new blob meanwhile; healthy files are untouched.
func TestBrokenMetadata(t *testing.T) {
	ctx := context.Background()
	svc, m, blobs := newService(t, "")
	admin := coffer.AdminPrincipal()
	files, err := upload(svc, admin, "default", text("abc"), text("def"))
	must(t, err)
	must(t, blobs.Delete(ctx, files[0].BlobKey))
	broken, err := svc.ListBrokenMetadata(ctx, admin)
	must(t, err)
	if len(broken) != 1 || broken[0].ID != files[0].ID {
		t.Fatalf("broken: %d files", len(broken))
	}
	_, _, _, err = svc.OpenFile(ctx, admin, files[0].ID)
	wantCode(t, "opening a file without blob", err, coffer.EINTERNAL)
	deleted, err := svc.DeleteBrokenMetadata(ctx, admin)
	must(t, err)
	if len(deleted) != 1 || deleted[0].ID != files[0].ID {
		t.Fatalf("deleted: %d files", len(deleted))
	}
	if _, err := m.GetFile(ctx, files[0].ID); coffer.ErrorCode(err) != coffer.ENOTFOUND {
		t.Fatalf("broken row after the delete: %v", err)
	}
	if got := read(t, svc, admin, files[1].ID); got != "def" {
		t.Fatalf("healthy file reads %q", got)
	}
}
