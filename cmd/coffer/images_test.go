package main

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/imaging"
)

func TestFindImager(t *testing.T) {
	dir := t.TempDir()
	onPath := filepath.Join(dir, imagerName)
	if err := os.WriteFile(onPath, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir)
	if p, err := findImager(""); err != nil || p != onPath {
		t.Errorf("from $PATH: %q, %v", p, err)
	}
	if p, err := findImager("/bin/sh"); err != nil || p != "/bin/sh" {
		t.Errorf("flag: %q, %v", p, err)
	}
	if _, err := findImager(filepath.Join(dir, "missing")); err == nil {
		t.Error("a missing --image-worker was accepted")
	}
	t.Setenv("PATH", t.TempDir())
	if _, err := findImager(""); err == nil || !strings.Contains(err.Error(), "go build ./cmd/coffer-imager") {
		t.Errorf("nothing found: %v", err)
	}
}

// A server without a usable worker still starts: transforms answer 501, and the
// reason is logged once.
func TestNewImagesWithoutWorker(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	var logs bytes.Buffer
	c := &serveConfig{ImageWorker: "/bin/true", ImageWorkers: 1, ImageQueue: 1, ImageMaxPixels: 1000, ImageMaxBytes: 1000,
		ImageMaxCost: 1000, ImageTimeout: time.Second}
	e, err := newImages(c, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	_, err = e.Transform(context.Background(), strings.NewReader("x"), imaging.Options{Width: 1})
	if coffer.ErrorCode(err) != coffer.ENOTIMPLEMENTED {
		t.Errorf("Transform: %v", err)
	}
	if n := strings.Count(logs.String(), "image transformations are off"); n != 1 {
		t.Errorf("logged %d times:\n%s", n, logs.String())
	}
	c.ImageWorkerIdle = -time.Second
	if _, err := newImages(c, slog.Default()); err == nil {
		t.Error("a negative idle timeout accepted")
	}
	c.ImageWorkerIdle, c.ImageWorkers = 0, 0
	if _, err := newImages(c, slog.Default()); err == nil {
		t.Error("invalid image settings accepted")
	}
}

// The server must not link libvips (its ~100 shared libraries cost ~43 MB of RSS at
// idle): only coffer-imager does. The test binary links what the server links.
func TestServerDoesNotLinkLibvips(t *testing.T) {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		t.Skip("no build info")
	}
	if len(bi.Deps) == 0 {
		t.Fatal("build info lists no modules: the check would prove nothing")
	}
	for _, m := range bi.Deps {
		if strings.Contains(m.Path, "govips") {
			t.Fatalf("cmd/coffer links %s", m.Path)
		}
	}
}
