package service_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/meta"
	"github.com/coffer/coffer/service"
	"github.com/coffer/coffer/virusscan/clamd"
	"github.com/coffer/coffer/virusscan/clamd/clamdtest"
)

// scanWith makes svc scan uploads with the clamd at addr, recording rejections in
// rejections (nil: none).
func scanWith(t *testing.T, svc *service.Service, addr string, rejections meta.Rejections, failOpen bool) {
	t.Helper()
	cfg := clamd.DefaultConfig()
	cfg.Addr, cfg.Timeout = addr, 10*time.Second
	c, err := clamd.New(cfg)
	must(t, err)
	svc.SetScanning(service.Scanning{Scanner: c, Rejections: rejections, FailOpen: failOpen})
}

// An infected upload is refused with the signature, leaves no blob, intent or row,
// and is recorded with its origin (the metadata name and id that came first, the
// uploader); an infected replace keeps the file as it was and records the file's id
// and name. Clean uploads are stored.
func TestScanRejectsInfectedUploads(t *testing.T) {
	ctx := context.Background()
	d := clamdtest.Start(t, clamdtest.Options{})
	svc, m, blobs := newService(t, ownerRules)
	scanWith(t, svc, d.Addr, m, false)
	u := user("u-42")
	clean := named(t, svc, u, "clean.txt")
	before, _ := leftovers(t, m, blobs)

	givenID := coffer.NewFileID()
	up, err := svc.BeginUpload(ctx, u, "default")
	must(t, err)
	defer up.Abort(ctx)
	must(t, up.SetMeta(0, service.UploadMeta{ID: givenID, Name: "docs/eicar.com"}))
	err = up.AddContent(ctx, "upload.bin", "", strings.NewReader(clamdtest.EICAR), int64(len(clamdtest.EICAR)))
	wantCode(t, "infected upload", err, coffer.EFORBIDDEN)
	if want := "virus found: " + clamdtest.Signature; !strings.Contains(err.Error(), want) {
		t.Fatalf("error %v, want %q", err, want)
	}
	rp, err := svc.BeginReplace(ctx, u, clean.ID)
	must(t, err)
	defer rp.Abort(ctx)
	wantCode(t, "infected replace", rp.AddContent(ctx, "x.bin", "", strings.NewReader(clamdtest.EICAR), -1), coffer.EFORBIDDEN)
	if k, n := leftovers(t, m, blobs); k != before || n != 0 {
		t.Fatalf("refused uploads left blobs %q (before %q) and %d intents", k, before, n)
	}
	if got := read(t, svc, u, clean.ID); got != "abc" {
		t.Fatalf("the file reads %q after an infected replace", got)
	}

	wantCode(t, "rejections as a user", second(svc.ListRejections(ctx, u, 10)), coffer.EFORBIDDEN)
	rs, err := svc.ListRejections(ctx, coffer.AdminPrincipal(), 10)
	must(t, err)
	if len(rs) != 2 {
		t.Fatalf("%d rejections recorded, want 2", len(rs))
	}
	byFile := map[string]*coffer.Rejection{rs[0].FileID: rs[0], rs[1].FileID: rs[1]}
	for id, name := range map[string]string{clean.ID: "clean.txt", givenID: "docs/eicar.com"} {
		r := byFile[id]
		if r == nil || r.Name != name || r.UserID != "u-42" || r.Role != "user" || r.BucketID != "default" ||
			r.Signature != clamdtest.Signature || r.Size != int64(len(clamdtest.EICAR)) {
			t.Fatalf("rejection of %s: %+v, want name %s", id, r, name)
		}
	}
}

// With the scanner down, uploads are refused (EUNAVAILABLE) and leave nothing, unless
// the service may fail open: then they are stored unscanned.
func TestScannerDown(t *testing.T) {
	for _, failOpen := range []bool{false, true} {
		svc, m, blobs := newService(t, "")
		scanWith(t, svc, clamdtest.FreeAddr(t), nil, failOpen)
		files, err := upload(svc, coffer.AdminPrincipal(), "default", text("abc"))
		if failOpen {
			must(t, err)
			if got := read(t, svc, coffer.AdminPrincipal(), files[0].ID); got != "abc" {
				t.Fatalf("failing open stored %q", got)
			}
			continue
		}
		wantCode(t, "scanner down", err, coffer.EUNAVAILABLE)
		if k, n := leftovers(t, m, blobs); k != "" || n != 0 {
			t.Fatalf("refused upload left blobs %q and %d intents", k, n)
		}
	}
}
