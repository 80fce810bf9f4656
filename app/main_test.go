package app

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// imager is a coffer-imager built for this run, "" without libvips.
var imager string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "coffer-app")
	if err != nil {
		panic(err)
	}
	if exec.Command("pkg-config", "--exists", "vips").Run() == nil {
		imager = filepath.Join(dir, imagerName)
		out, err := exec.Command("go", "build", "-o", imager, "github.com/coffer/coffer/cmd/coffer-imager").CombinedOutput()
		if err != nil {
			fmt.Fprintf(os.Stderr, "build %s: %v\n%s", imagerName, err, out)
			os.Exit(1)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// discard is a logger that writes nowhere.
func discard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
