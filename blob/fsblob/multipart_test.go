package fsblob

import (
	"bytes"
	"context"
	"os"
	"testing"
	"time"

	"github.com/coffer/coffer"
)

func TestMultipartIDsStayInUploads(t *testing.T) {
	ctx := context.Background()
	d, _ := New(t.TempDir())
	for _, id := range []string{"../objects", "..", "", "gggggggggggggggggggggggggggggggg", "0123456789abcdef0123456789abcdef/"} {
		if _, err := d.Parts(ctx, "k", id); coffer.ErrorCode(err) != coffer.ENOTFOUND {
			t.Errorf("Parts(%q) = %v, want ENOTFOUND", id, err)
		}
	}
}

// TestMultipartCrashLeftTwoParts: a crash between renaming a replacing part in and
// removing the one it replaced leaves both; the newer counts (the stale one is named
// to be listed last).
func TestMultipartCrashLeftTwoParts(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	d, _ := New(dir)
	id, err := d.CreateUpload(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	p, err := d.PutPart(ctx, "k", id, 1, bytes.NewReader([]byte("newer")), 5)
	if err != nil {
		t.Fatal(err)
	}
	stale := d.uploadDir(id) + "/part-00001-ffffffff"
	os.WriteFile(stale, []byte("older part"), 0o600)
	past := time.Now().Add(-time.Hour)
	os.Chtimes(stale, past, past)
	if ps, err := d.Parts(ctx, "k", id); err != nil || len(ps) != 1 || ps[0] != p {
		t.Fatalf("Parts = %+v, %v; want [%+v]", ps, err, p)
	}
}

// TestSweepTempRemovesBrokenUploads: an upload directory without its key file (a crash
// while creating or removing the upload) goes once old; live uploads stay.
func TestSweepTempRemovesBrokenUploads(t *testing.T) {
	ctx := context.Background()
	d, _ := New(t.TempDir())
	live, err := d.CreateUpload(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	broken, fresh := d.uploadDir("0123456789abcdef0123456789abcdef"), d.uploadDir("fedcba9876543210fedcba9876543210")
	os.MkdirAll(broken, 0o750)
	os.MkdirAll(fresh, 0o750)
	past := time.Now().Add(-2 * time.Hour)
	os.Chtimes(broken, past, past)
	os.Chtimes(d.uploadDir(live), past, past)
	if n, err := d.SweepTemp(ctx, time.Now().Add(-time.Hour)); err != nil || n != 1 {
		t.Fatalf("SweepTemp = %d, %v; want 1", n, err)
	}
	if _, err := os.Stat(broken); !os.IsNotExist(err) {
		t.Error("broken upload directory kept")
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Error("recent upload directory removed")
	}
	if _, err := d.Parts(ctx, "k", live); err != nil {
		t.Errorf("live upload swept: %v", err)
	}
}
