//go:build !novips

package vips

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/coffer/coffer/imaging"
	"github.com/coffer/coffer/imaging/remote"
)

// imagerBinary builds cmd/coffer-imager once per test binary run.
var imagerBinary = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "coffer-imager-bench")
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "coffer-imager")
	out, err := exec.Command("go", "build", "-o", path, "github.com/coffer/coffer/cmd/coffer-imager").CombinedOutput()
	if err != nil {
		return "", &exec.ExitError{Stderr: out}
	}
	return path, nil
})

// BenchmarkEngine800 compares this engine in process with the same engine behind the
// coffer-imager worker (imaging/remote, what coffer serve uses): the 5 MB JPEG to
// 800 px wide JPEG, one transform at a time ("seq", latency) and two at once on two
// workers ("par2", throughput). The difference is the cost of the process boundary:
// streaming the source through a pipe and the result back.
//
//	scripts/bench-ab.sh ./imaging/vips 'Engine800/inprocess/seq$' 'Engine800/remote/seq$' 5 2s
func BenchmarkEngine800(b *testing.B) {
	src := benchSource(b)
	cfg := imaging.DefaultConfig()
	cfg.Workers = 2
	engines := map[string]func(b *testing.B) imaging.Engine{
		"inprocess": func(b *testing.B) imaging.Engine { return newEngine(b, cfg) },
		"remote":    func(b *testing.B) imaging.Engine { return newRemote(b, cfg) },
	}
	o := imaging.Options{Width: 800, Format: imaging.JPEG}
	for _, name := range []string{"inprocess", "remote"} {
		b.Run(name+"/seq", func(b *testing.B) {
			e := engines[name](b)
			b.SetBytes(int64(len(src)))
			for b.Loop() {
				transformOnce(b, e, src, o)
			}
		})
		b.Run(name+"/par2", func(b *testing.B) {
			e := engines[name](b)
			b.SetBytes(int64(len(src)))
			b.SetParallelism(1) // GOMAXPROCS goroutines: 2 on this machine
			b.ResetTimer()      // not the start-up (nor the build) of the worker
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					transformOnce(b, e, src, o)
				}
			})
		})
	}
}

// newRemote starts a remote engine on the built coffer-imager.
func newRemote(b *testing.B, cfg imaging.Config) imaging.Engine {
	path, err := imagerBinary()
	if err != nil {
		b.Fatalf("building coffer-imager: %v", err)
	}
	rcfg := remote.DefaultConfig(path)
	rcfg.Imaging, rcfg.Log = cfg, slog.New(slog.NewTextHandler(io.Discard, nil))
	e, err := remote.New(rcfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { e.Close() })
	// Start the worker before timing: any answer, even a refusal of the empty source, will do.
	_, _ = e.Transform(context.Background(), bytes.NewReader(nil), imaging.Options{Width: 1})
	return e
}

func transformOnce(b *testing.B, e imaging.Engine, src []byte, o imaging.Options) {
	res, err := e.Transform(context.Background(), bytes.NewReader(src), o)
	if err != nil || len(res.Data) == 0 {
		b.Fatalf("transform: %v", err)
	}
}
