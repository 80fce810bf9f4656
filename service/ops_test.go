package service_test

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/blob"
	"github.com/coffer/coffer/blob/memblob"
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
