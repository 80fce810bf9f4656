package service_test

import (
	"context"
	"slices"
	"testing"

	"github.com/coffer/coffer"
)

// Buckets are the admin's: others are refused (401 without credentials, 403 with).
func TestBucketsNeedAdmin(t *testing.T) {
	ctx := context.Background()
	svc, _, _ := newService(t, ownerRules)
	for _, c := range []struct {
		p    *coffer.Principal
		want string
	}{{user("u1"), coffer.EFORBIDDEN}, {&coffer.Principal{Role: "anonymous", Anonymous: true}, coffer.EUNAUTHORIZED}} {
		for name, err := range map[string]error{
			"list":   second(svc.ListBuckets(ctx, c.p)),
			"get":    second(svc.GetBucket(ctx, c.p, "default")),
			"create": second(svc.CreateBucket(ctx, c.p, "b", coffer.BucketUpdate{})),
			"update": second(svc.UpdateBucket(ctx, c.p, "default", coffer.BucketUpdate{})),
			"delete": svc.DeleteBucket(ctx, c.p, "default"),
		} {
			wantCode(t, name+" as "+c.p.Role, err, c.want)
		}
	}
	if _, err := svc.GetBucket(ctx, coffer.AdminPrincipal(), "default"); err != nil {
		t.Fatalf("the default bucket: %v", err)
	}
}

// A created bucket starts from hasura-storage's defaults, then takes the given
// settings; invalid settings and taken ids are refused.
func TestCreateBucket(t *testing.T) {
	ctx := context.Background()
	svc, _, _ := newService(t, "")
	admin := coffer.AdminPrincipal()
	for name, c := range map[string]struct {
		id string
		u  coffer.BucketUpdate
	}{
		"bad id":          {"Not A Bucket!", coffer.BucketUpdate{}},
		"minimum < 0":     {"b", coffer.BucketUpdate{MinUploadFileSize: ptr(int64(-1))}},
		"min above max":   {"b", coffer.BucketUpdate{MinUploadFileSize: ptr(int64(11)), MaxUploadFileSize: ptr(int64(10))}},
		"no expiration":   {"b", coffer.BucketUpdate{DownloadExpiration: ptr(int64(0))}},
		"bad MIME":        {"b", coffer.BucketUpdate{AllowedMimeTypes: &[]string{"image"}}},
		"header breaking": {"b", coffer.BucketUpdate{CacheControl: ptr("max-age=1\r\nX: y")}},
	} {
		wantCode(t, name, second(svc.CreateBucket(ctx, admin, c.id, c.u)), coffer.EINVALID)
	}
	b, err := svc.CreateBucket(ctx, admin, "b", coffer.BucketUpdate{MaxUploadFileSize: ptr(int64(10)), AllowedMimeTypes: &[]string{"image/*"}})
	must(t, err)
	want := coffer.NewBucket("b")
	want.MaxUploadFileSize, want.AllowedMimeTypes = 10, []string{"image/*"}
	got, err := svc.GetBucket(ctx, admin, "b")
	must(t, err)
	for _, x := range []*coffer.Bucket{b, got} {
		if x.MinUploadFileSize != want.MinUploadFileSize || x.MaxUploadFileSize != 10 || !slices.Equal(x.AllowedMimeTypes, want.AllowedMimeTypes) ||
			x.CacheControl != want.CacheControl || x.DownloadExpiration != want.DownloadExpiration || x.PresignedURLsEnabled != want.PresignedURLsEnabled {
			t.Fatalf("bucket %+v, want %+v", x, want)
		}
	}
	wantCode(t, "a taken id", second(svc.CreateBucket(ctx, admin, "b", coffer.BucketUpdate{})), coffer.ECONFLICT)
	bs, err := svc.ListBuckets(ctx, admin)
	must(t, err)
	if len(bs) != 2 || bs[0].ID != "b" || bs[1].ID != "default" {
		t.Fatalf("%d buckets listed", len(bs))
	}
}

// An update is validated against the bucket as it would be (a new minimum above the
// stored maximum is refused) and a refused one changes nothing.
func TestUpdateBucket(t *testing.T) {
	ctx := context.Background()
	svc, _, _ := newService(t, "")
	admin := coffer.AdminPrincipal()
	maxSize, minSize := int64(10), int64(11)
	_, err := svc.UpdateBucket(ctx, admin, "default", coffer.BucketUpdate{MaxUploadFileSize: &maxSize})
	must(t, err)
	_, err = svc.UpdateBucket(ctx, admin, "default", coffer.BucketUpdate{MinUploadFileSize: &minSize, CacheControl: ptr("no-store")})
	wantCode(t, "minimum above the stored maximum", err, coffer.EINVALID)
	b, err := svc.GetBucket(ctx, admin, "default")
	must(t, err)
	if b.MinUploadFileSize != 1 || b.MaxUploadFileSize != 10 || b.CacheControl != coffer.NewBucket("x").CacheControl {
		t.Fatalf("after a refused update: %+v", b)
	}
	wantCode(t, "a missing bucket", second(svc.UpdateBucket(ctx, admin, "gone", coffer.BucketUpdate{})), coffer.ENOTFOUND)
	wantCode(t, "an invalid id", second(svc.GetBucket(ctx, admin, "../x")), coffer.ENOTFOUND)
}

// Only an empty bucket other than the default one can be deleted.
func TestDeleteBucket(t *testing.T) {
	ctx := context.Background()
	svc, _, _ := newService(t, "")
	admin := coffer.AdminPrincipal()
	wantCode(t, "the default bucket", svc.DeleteBucket(ctx, admin, "default"), coffer.EINUSE)
	_, err := svc.CreateBucket(ctx, admin, "b", coffer.BucketUpdate{})
	must(t, err)
	files, err := upload(svc, admin, "b", text("abc"))
	must(t, err)
	wantCode(t, "a bucket holding a file", svc.DeleteBucket(ctx, admin, "b"), coffer.EINUSE)
	must(t, svc.DeleteFile(ctx, admin, files[0].ID))
	must(t, svc.DeleteBucket(ctx, admin, "b"))
	wantCode(t, "the deleted bucket", second(svc.GetBucket(ctx, admin, "b")), coffer.ENOTFOUND)
	wantCode(t, "deleting it again", svc.DeleteBucket(ctx, admin, "b"), coffer.ENOTFOUND)
}

// ptr returns a pointer to v.
func ptr[T any](v T) *T { return &v }
