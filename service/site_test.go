package service_test

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/blob"
	"github.com/coffer/coffer/blob/memblob"
	"github.com/coffer/coffer/service"
)

// A site finds a file by name (the newest of files sharing it), whoever asks, and a
// remembered id that no longer carries the name is refused, so the caller looks again.
func TestSiteFileByName(t *testing.T) {
	ctx := context.Background()
	svc, _, _ := cachedService(t, service.DefaultConfig(), openSQLite(t), blob.New(memblob.New()))
	admin := coffer.AdminPrincipal()
	old := put(t, svc, admin, "", "old")
	time.Sleep(5 * time.Millisecond)
	newer := put(t, svc, admin, "", "new")
	f, err := svc.SiteFile(ctx, "default", "a.txt")
	if err != nil || f.ID != newer.ID {
		t.Fatalf("SiteFile = %v, %v; want the newer %s (older %s)", f, err, newer.ID, old.ID)
	}
	if _, err := svc.SiteFile(ctx, "default", "a.tx"); coffer.ErrorCode(err) != coffer.ENOTFOUND {
		t.Fatalf("a prefix of the name: %v", err)
	}
	if _, err := svc.SiteFile(ctx, "nope", "a.txt"); coffer.ErrorCode(err) != coffer.ENOTFOUND {
		t.Fatalf("missing bucket: %v", err)
	}
	_, rd, err := svc.OpenSiteFile(ctx, "default", "a.txt", newer.ID)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(rd)
	rd.Close()
	if string(b) != "new" {
		t.Fatalf("read %q", b)
	}
	name := "b.txt"
	if _, err := svc.UpdateFile(ctx, admin, newer.ID, &name, nil); err != nil {
		t.Fatal(err)
	}
	if _, _, err := svc.OpenSiteFile(ctx, "default", "a.txt", newer.ID); coffer.ErrorCode(err) != coffer.ENOTFOUND {
		t.Fatalf("a renamed file under its old name: %v", err)
	}
	if f, err := svc.SiteFile(ctx, "default", "a.txt"); err != nil || f.ID != old.ID {
		t.Fatalf("after the rename: %v, %v; want %s", f, err, old.ID)
	}
}

// In a bucket a user may upload to, a later file of the same name does not displace
// the page a site serves: the first one made is served (a replace keeps its place).
func TestSiteFileFirstInWritableBucket(t *testing.T) {
	ctx := context.Background()
	svc, _, _ := cachedService(t, service.DefaultConfig(), openSQLite(t), blob.New(memblob.New()))
	must(t, svc.SetRules(ctx, coffer.AdminPrincipal(), []byte(`{"rules":[{"role":"user","buckets":["default"],"upload":{}}]}`)))
	page := put(t, svc, coffer.AdminPrincipal(), "", "the admin's page")
	time.Sleep(5 * time.Millisecond)
	put(t, svc, user("u1"), "", "a user's page")
	f, err := svc.SiteFile(ctx, "default", "a.txt")
	if err != nil || f.ID != page.ID {
		t.Fatalf("SiteFile = %v, %v; want the admin's first file %s", f, err, page.ID)
	}
}
