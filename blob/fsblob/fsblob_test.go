package fsblob_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coffer/coffer/blob"
	"github.com/coffer/coffer/blob/blobtest"
	"github.com/coffer/coffer/blob/fsblob"
)

func newDriver(tb testing.TB) *fsblob.Driver {
	d, err := fsblob.New(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	return d
}

func TestConformance(t *testing.T) {
	blobtest.Run(t, func(t *testing.T) blob.Driver { return newDriver(t) })
}

func TestNoTempFilesLeft(t *testing.T) {
	var dirs []string
	blobtest.Run(t, func(t *testing.T) blob.Driver {
		dir := t.TempDir()
		dirs = append(dirs, dir)
		d, err := fsblob.New(dir)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if left, _ := os.ReadDir(filepath.Join(dir, "tmp")); len(left) != 0 {
				t.Errorf("%d temp files left after failed and successful puts", len(left))
			}
		})
		return d
	})
	if len(dirs) == 0 {
		t.Fatal("suite ran no test")
	}
}

func TestSweepTemp(t *testing.T) {
	dir := t.TempDir()
	d, _ := fsblob.New(dir)
	old, fresh := filepath.Join(dir, "tmp", "put-old"), filepath.Join(dir, "tmp", "put-fresh")
	os.WriteFile(old, []byte("x"), 0o600)
	os.WriteFile(fresh, []byte("x"), 0o600)
	past := time.Now().Add(-2 * time.Hour)
	os.Chtimes(old, past, past)
	n, err := d.SweepTemp(context.Background(), time.Now().Add(-time.Hour))
	if err != nil || n != 1 {
		t.Fatalf("SweepTemp = %d, %v", n, err)
	}
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Fatal("old temp file kept")
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Fatal("fresh temp file removed")
	}
}

func TestOpenGivesOSFile(t *testing.T) {
	d := newDriver(t)
	if _, err := d.Put(context.Background(), "c/1", strings.NewReader("x"), 1); err != nil {
		t.Fatal(err)
	}
	r, err := d.Open(context.Background(), "c/1")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if f, ok := r.(blob.OSFiler); !ok || f.OSFile() == nil {
		t.Fatal("fsblob reader does not expose its *os.File (sendfile)")
	}
}

func BenchmarkDriver(b *testing.B) {
	blobtest.Bench(b, func(b *testing.B) blob.Driver { return newDriver(b) })
}

func TestReopen(t *testing.T) {
	blobtest.RunReopen(t, func(t *testing.T) func() blob.Driver {
		dir := t.TempDir()
		return func() blob.Driver {
			d, err := fsblob.New(dir)
			if err != nil {
				t.Fatal(err)
			}
			return d
		}
	})
}
