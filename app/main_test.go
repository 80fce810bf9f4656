package app

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"testing"

	"github.com/coffer/coffer/imaging/imagingtest"
)

// imager is a coffer-imager built for this run, "" without libvips.
var imager string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "coffer-app")
	if err != nil {
		panic(err)
	}
	if imager, err = imagingtest.BuildImager(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// discard is a logger that writes nowhere.
func discard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
