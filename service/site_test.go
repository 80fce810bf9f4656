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

// In a writable bucket whose rules preset the uploader, a user's file never takes a
// page's name from the admin's: not by an earlier upload (squatting a page the
// admin publishes later), nor by renaming an older file into it.
func TestSiteFileAdminFirstInWritableBucket(t *testing.T) {
	ctx := context.Background()
	svc, _, _ := cachedService(t, service.DefaultConfig(), openSQLite(t), blob.New(memblob.New()))
	must(t, svc.SetRules(ctx, coffer.AdminPrincipal(), []byte(`{"rules":[{"role":"user","buckets":["default"],
		"upload":{"presets":{"uploaded_by_user_id":"X-Hasura-User-Id"}},"update":{"filter":{"uploaded_by_user_id":{"_eq":"X-Hasura-User-Id"}}},
		"read":{"filter":{"uploaded_by_user_id":{"_eq":"X-Hasura-User-Id"}}}}]}`)))
	squat := put(t, svc, user("u1"), "", "a user's page, first")
	old := put(t, svc, user("u1"), "", "a user's older file")
	time.Sleep(5 * time.Millisecond)
	page := put(t, svc, coffer.AdminPrincipal(), "", "the admin's page")
	name := "b.txt"
	if _, err := svc.UpdateFile(ctx, coffer.AdminPrincipal(), page.ID, &name, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.UpdateFile(ctx, user("u1"), old.ID, &name, nil); err != nil {
		t.Fatal(err)
	}
	for n, want := range map[string]string{"a.txt": squat.ID, "b.txt": page.ID} {
		if f, err := svc.SiteFile(ctx, "default", n); err != nil || f.ID != want {
			t.Errorf("SiteFile(%s) = %v, %v; want %s", n, f, err, want)
		}
	}
	page2 := put(t, svc, coffer.AdminPrincipal(), "", "the admin's page, published after the squat")
	if f, err := svc.SiteFile(ctx, "default", "a.txt"); err != nil || f.ID != page2.ID {
		t.Errorf("SiteFile(a.txt) after the admin published it = %v, %v; want %s", f, err, page2.ID)
	}
}
