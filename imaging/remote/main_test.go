package remote

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/imaging"
)

// fakeWorkerEnv makes the test binary act as a worker with fakeEngine, so the
// protocol, the pool and crash recovery are tested without libvips.
const fakeWorkerEnv = "COFFER_REMOTE_FAKE_WORKER"

// imagerPath is the real coffer-imager built by TestMain, "" without libvips.
var imagerPath string

func TestMain(m *testing.M) {
	if os.Getenv(fakeWorkerEnv) == "1" {
		os.Exit(runFakeWorker(os.Args[1:]))
	}
	dir, err := os.MkdirTemp("", "coffer-imager-test")
	if err != nil {
		panic(err)
	}
	if exec.Command("pkg-config", "--exists", "vips").Run() == nil {
		imagerPath = filepath.Join(dir, "coffer-imager")
		out, err := exec.Command("go", "build", "-o", imagerPath, "github.com/coffer/coffer/cmd/coffer-imager").CombinedOutput()
		if err != nil {
			fmt.Fprintf(os.Stderr, "build coffer-imager: %v\n%s", err, out)
			os.Exit(1)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// runFakeWorker serves fakeEngine on stdin/stdout with the limits in args.
func runFakeWorker(args []string) int {
	if p, err := strconv.ParseUint(os.Getenv(fakeHelloEnv), 10, 32); err == nil {
		return sayHelloOnly(uint32(p))
	}
	cfg := imaging.DefaultConfig()
	for i := 0; i+1 < len(args); i += 2 {
		n, _ := strconv.ParseInt(args[i+1], 10, 64)
		switch args[i] {
		case "--workers":
			cfg.Workers = int(n)
		case "--max-bytes":
			cfg.MaxSourceBytes = n
		}
	}
	e := &fakeEngine{cfg: cfg, pool: imaging.NewPool(cfg.Workers, 1024)}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	if os.Getenv(fakeListenEnv) != "" {
		return listenFake(e, log)
	}
	if err := Serve(os.Stdin, os.Stdout, e, cfg.MaxSourceBytes, log); err != nil {
		fmt.Fprintln(os.Stderr, "fake worker:", err)
		return 1
	}
	return 0
}

// fakeEngine answers by the source's content: "sleep:DURATION" waits (or until
// cancelled), "error:CODE" fails with that code, "exit" exits the process,
// "stubborn-exit:DURATION" exits it after DURATION, cancelled or not (a decoder that
// does not look at its context); anything else comes back reversed, as the format
// asked for, sized w×h.
type fakeEngine struct {
	cfg  imaging.Config
	pool *imaging.Pool
}

func (e *fakeEngine) Transform(ctx context.Context, src io.Reader, o imaging.Options) (*imaging.Result, error) {
	var res *imaging.Result
	err := e.pool.Do(ctx, func(ctx context.Context) error {
		data, err := e.cfg.ReadSource(src, 0)
		if err != nil {
			return err
		}
		res, err = e.answer(ctx, data, o)
		return err
	})
	return res, err
}

func (e *fakeEngine) answer(ctx context.Context, data []byte, o imaging.Options) (*imaging.Result, error) {
	s := string(data)
	switch {
	case strings.HasPrefix(s, "sleep:"):
		d, _ := time.ParseDuration(s[len("sleep:"):])
		select {
		case <-time.After(d):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	case strings.HasPrefix(s, "error:"):
		return nil, &coffer.Error{Code: s[len("error:"):], Message: "fake failure", Err: errors.New("fake cause")}
	case s == "exit":
		os.Exit(3)
	case strings.HasPrefix(s, "stubborn-exit:"):
		d, _ := time.ParseDuration(s[len("stubborn-exit:"):])
		time.Sleep(d)
		os.Exit(3)
	}
	out := bytes.Clone(data)
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	steps := []imaging.StepTiming{{Name: "read", Duration: time.Millisecond}, {Name: "encode", Duration: 2 * time.Millisecond}}
	return &imaging.Result{Data: out, Format: o.Format, Width: o.Width, Height: o.Height, Steps: steps}, nil
}

func (e *fakeEngine) Supports(f imaging.Format) bool { return f == imaging.JPEG || f == imaging.PNG }
func (e *fakeEngine) Pool() *imaging.Pool            { return e.pool }
func (e *fakeEngine) Close() error                   { e.pool.Close(); return nil }

// newFake returns an engine whose worker is this test binary acting as fakeEngine.
func newFake(t *testing.T, workers, queue int) *Engine {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig(exe)
	cfg.Imaging.Workers, cfg.Imaging.Queue, cfg.Imaging.MaxSourceBytes = workers, queue, 8<<20
	cfg.Env = []string{fakeWorkerEnv + "=1"}
	cfg.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// newReal returns an engine running the real coffer-imager, or skips without libvips.
func newReal(t *testing.T, mod func(*Config)) *Engine {
	t.Helper()
	if imagerPath == "" {
		t.Skip("libvips is not installed (pkg-config vips): coffer-imager cannot be built")
	}
	cfg := DefaultConfig(imagerPath)
	cfg.Imaging.Workers, cfg.Imaging.Queue = 2, 4
	cfg.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	if mod != nil {
		mod(&cfg)
	}
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// children returns the pids of this process's children (zombies included).
func children(t *testing.T) []int {
	t.Helper()
	files, _ := filepath.Glob("/proc/self/task/*/children")
	var pids []int
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, s := range strings.Fields(string(b)) {
			n, _ := strconv.Atoi(s)
			pids = append(pids, n)
		}
	}
	return pids
}

func codeOf(err error) string { return coffer.ErrorCode(err) }

// workerPID returns the running worker's pid, 0 if none.
func (e *Engine) workerPID() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.w == nil {
		return 0
	}
	return e.w.peer.(*child).cmd.Process.Pid
}
