package remote

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/imaging"
)

// FindImager takes the flag's path, else finds the binary on $PATH, and says how to
// build it when there is none.
func TestFindImager(t *testing.T) {
	dir := t.TempDir()
	onPath := filepath.Join(dir, ImagerName)
	if err := os.WriteFile(onPath, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir)
	if p, err := FindImager(""); err != nil || p != onPath {
		t.Errorf("from $PATH: %q, %v", p, err)
	}
	if p, err := FindImager("/bin/sh"); err != nil || p != "/bin/sh" {
		t.Errorf("flag: %q, %v", p, err)
	}
	if _, err := FindImager(filepath.Join(dir, "missing")); err == nil {
		t.Error("a missing --image-worker was accepted")
	}
	t.Setenv("PATH", t.TempDir())
	if _, err := FindImager(""); err == nil || !strings.Contains(err.Error(), "go build ./cmd/coffer-imager") {
		t.Errorf("nothing found: %v", err)
	}
}

// A server without a usable worker still starts: transforms answer 501, and the
// reason is logged once.
func TestOpenWithoutWorker(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	var logs bytes.Buffer
	icfg := imaging.DefaultConfig()
	icfg.Workers, icfg.Queue, icfg.MaxSourcePixels, icfg.MaxSourceBytes, icfg.MaxCost, icfg.Timeout = 1, 1, 1000, 1000, 1000, time.Second
	icfg.UserWorkers, icfg.UserQueue = 0, 0
	s := Setup{Imaging: icfg, Worker: "/bin/true", Log: slog.New(slog.NewTextHandler(&logs, nil))}
	e, err := Open(s)
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
	s.Idle, s.Log = -time.Second, slog.Default()
	if _, err := Open(s); err == nil {
		t.Error("a negative idle timeout accepted")
	}
	s.Idle, s.Imaging.Workers = 0, 0
	if _, err := Open(s); err == nil {
		t.Error("invalid image settings accepted")
	}
}
