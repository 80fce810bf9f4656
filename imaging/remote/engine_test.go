package remote

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/imaging"
)

var opts = imaging.Options{Width: 10, Height: 20, Format: imaging.PNG}

func TestNoWorkerUntilFirstTransform(t *testing.T) {
	before := len(children(t))
	e := newFake(t, 1, 1)
	if e.workerPID() != 0 || len(children(t)) != before {
		t.Fatalf("a worker runs before any transform: %v", children(t))
	}
	if !e.Supports(imaging.PNG) || e.Supports(imaging.AVIF) {
		t.Errorf("Supports does not follow the worker's hello")
	}
	if _, err := e.Transform(context.Background(), strings.NewReader("x"), opts); err != nil {
		t.Fatal(err)
	}
	if len(children(t)) != before+1 {
		t.Errorf("children after a transform: %v", children(t))
	}
}

func TestRoundTripLargeSourceAndResult(t *testing.T) {
	e := newFake(t, 2, 2)
	src := make([]byte, 3*ChunkSize+123) // several chunks both ways
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range src {
		src[i] = byte(rng.Uint32())
	}
	res, err := e.Transform(context.Background(), io.MultiReader(bytes.NewReader(src)), opts) // no size hint
	if err != nil {
		t.Fatal(err)
	}
	want := slices.Clone(src)
	slices.Reverse(want)
	if !bytes.Equal(res.Data, want) {
		t.Fatalf("result differs (%d bytes, want %d)", len(res.Data), len(want))
	}
	if res.Format != imaging.PNG || res.Width != 10 || res.Height != 20 {
		t.Errorf("result = %v %dx%d", res.Format, res.Width, res.Height)
	}
	if len(res.Steps) != 2 || res.Steps[1].Name != "encode" || res.Steps[1].Duration != 2*time.Millisecond {
		t.Errorf("steps = %v", res.Steps)
	}
}

func TestErrorsKeepTheirCode(t *testing.T) {
	e := newFake(t, 2, 2)
	for _, code := range []string{coffer.EUNSUPPORTED, coffer.ETOOLARGE, coffer.EINVALID, coffer.ENOTIMPLEMENTED, coffer.EINTERNAL} {
		_, err := e.Transform(context.Background(), strings.NewReader("error:"+code), opts)
		var ce *coffer.Error
		if !errors.As(err, &ce) || ce.Code != code || ce.Message != "fake failure" || ce.Err == nil || ce.Err.Error() != "fake cause" {
			t.Errorf("%s: err = %#v", code, err)
		}
	}
	_, err := e.Transform(context.Background(), strings.NewReader("error:no_such_code"), opts)
	if codeOf(err) != coffer.EINTERNAL {
		t.Errorf("unknown code: %v", err)
	}
}

func TestSourceLimit(t *testing.T) {
	e := newFake(t, 1, 1)
	big := bytes.Repeat([]byte("a"), 8<<20+1)
	_, err := e.Transform(context.Background(), bytes.NewReader(big), opts) // size known
	if codeOf(err) != coffer.ETOOLARGE {
		t.Errorf("known size: %v", err)
	}
	_, err = e.Transform(context.Background(), io.MultiReader(bytes.NewReader(big)), opts) // found while streaming
	if codeOf(err) != coffer.ETOOLARGE {
		t.Errorf("streamed: %v", err)
	}
	if _, err := e.Transform(context.Background(), strings.NewReader("fine"), opts); err != nil {
		t.Errorf("after a refused source: %v", err)
	}
}

func TestInvalidOptionsNeverReachTheWorker(t *testing.T) {
	e := newFake(t, 1, 1)
	_, err := e.Transform(context.Background(), strings.NewReader("x"), imaging.Options{Width: -1})
	if codeOf(err) != coffer.EINVALID || e.workerPID() != 0 {
		t.Errorf("err = %v, worker pid %d", err, e.workerPID())
	}
}

func TestQueueFull(t *testing.T) {
	e := newFake(t, 1, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errc := make(chan error, 2)
	for range 2 { // one runs, one waits
		go func() { _, err := e.Transform(ctx, strings.NewReader("sleep:10s"), opts); errc <- err }()
	}
	waitFor(t, func() bool { return e.Pool().Busy() == 1 && e.Pool().Queued() == 1 })
	_, err := e.Transform(context.Background(), strings.NewReader("x"), opts)
	if !errors.Is(err, imaging.ErrBusy) || codeOf(err) != coffer.EUNAVAILABLE {
		t.Errorf("third transform: %v", err)
	}
	cancel()
	for range 2 {
		if err := <-errc; !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled transform: %v", err)
		}
	}
}

func TestCancelReturnsAtOnceAndWorkerStaysUsable(t *testing.T) {
	e := newFake(t, 1, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := e.Transform(ctx, strings.NewReader("sleep:10s"), opts)
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 2*time.Second {
		t.Fatalf("err = %v after %v", err, time.Since(start))
	}
	pid := e.workerPID()
	// The worker dropped the cancelled request, so its only worker is free again.
	res, err := e.Transform(context.Background(), strings.NewReader("ab"), opts)
	if err != nil || string(res.Data) != "ba" || e.workerPID() != pid {
		t.Errorf("after cancel: %v %v (pid %d, was %d)", res, err, e.workerPID(), pid)
	}
}

func TestWorkerKilledMidRequestRestarts(t *testing.T) {
	e := newFake(t, 2, 2)
	if _, err := e.Transform(context.Background(), strings.NewReader("warm"), opts); err != nil {
		t.Fatal(err)
	}
	old := e.workerPID()
	errc := make(chan error, 1)
	go func() { _, err := e.Transform(context.Background(), strings.NewReader("sleep:30s"), opts); errc <- err }()
	waitFor(t, func() bool { return e.Pool().Busy() == 1 })
	time.Sleep(50 * time.Millisecond) // let the request reach the worker
	if err := syscall.Kill(old, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-errc:
		if codeOf(err) != coffer.EUNAVAILABLE || !errors.Is(err, errWorkerDied) || !strings.Contains(err.Error(), "killed") {
			t.Errorf("in-flight transform: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("in-flight transform did not fail after the worker was killed")
	}
	res, err := e.Transform(context.Background(), strings.NewReader("ok"), opts)
	if err != nil || string(res.Data) != "ko" {
		t.Fatalf("after restart: %v %v", res, err)
	}
	if e.workerPID() == old || e.Starts() != 2 {
		t.Errorf("worker not restarted: pid %d (was %d), starts %d", e.workerPID(), old, e.Starts())
	}
	if slices.Contains(children(t), old) {
		t.Errorf("killed worker %d not reaped", old)
	}
}

func TestWorkerExitDuringRequest(t *testing.T) {
	e := newFake(t, 1, 1)
	_, err := e.Transform(context.Background(), strings.NewReader("exit"), opts)
	var crash *imaging.CrashError
	if codeOf(err) != coffer.EUNAVAILABLE || !strings.Contains(err.Error(), "exit status 3") || !errors.As(err, &crash) || crash.InFlight != 1 {
		t.Errorf("err = %v (crash %+v)", err, crash)
	}
	if _, err := e.Transform(context.Background(), strings.NewReader("again"), opts); err != nil {
		t.Errorf("after exit: %v", err)
	}
}

func TestCloseStopsTheWorker(t *testing.T) {
	e := newFake(t, 1, 1)
	if _, err := e.Transform(context.Background(), strings.NewReader("x"), opts); err != nil {
		t.Fatal(err)
	}
	pid := e.workerPID()
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("worker %d still exists after Close (zombie or running): %v", pid, err)
	}
	if _, err := e.Transform(context.Background(), strings.NewReader("x"), opts); !errors.Is(err, imaging.ErrClosed) {
		t.Errorf("after Close: %v", err)
	}
}

func TestMissingOrBrokenWorker(t *testing.T) {
	cfg := DefaultConfig("/nonexistent/coffer-imager")
	if _, err := New(cfg); err == nil {
		t.Error("New with a missing binary succeeded")
	}
	cfg = DefaultConfig("/bin/true") // exits without a hello
	if _, err := New(cfg); err == nil || !strings.Contains(err.Error(), "hello") {
		t.Errorf("New with a worker that says nothing: %v", err)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached within 10s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestIdleWorkerStopsAndComesBack(t *testing.T) {
	exe, _ := os.Executable()
	before := len(children(t))
	cfg := DefaultConfig(exe)
	cfg.Imaging.Workers, cfg.Imaging.Queue, cfg.IdleTimeout = 1, 1, 200*time.Millisecond
	cfg.Env = []string{fakeWorkerEnv + "=1"}
	cfg.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	// A transform longer than the idle timeout keeps its worker.
	if _, err := e.Transform(context.Background(), strings.NewReader("sleep:400ms"), opts); err != nil {
		t.Fatal(err)
	}
	pid := e.workerPID()
	waitFor(t, func() bool { return len(children(t)) == before })
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("idle worker %d not stopped and reaped: %v", pid, err)
	}
	res, err := e.Transform(context.Background(), strings.NewReader("ab"), opts)
	if err != nil || string(res.Data) != "ba" || e.Starts() != 2 {
		t.Fatalf("after idle stop: %v %v, starts %d", res, err, e.Starts())
	}
}

func TestRestartDelay(t *testing.T) {
	s := time.Second
	for n, want := range []time.Duration{0, 0, s, 2 * s, 4 * s, 8 * s, 16 * s, 32 * s, 60 * s, 60 * s} {
		if got := restartDelay(n, s, time.Minute); got != want {
			t.Errorf("restartDelay(%d) = %v, want %v", n, got, want)
		}
	}
	if got := restartDelay(1000, s, time.Minute); got != time.Minute {
		t.Errorf("restartDelay(1000) = %v", got)
	}
	if got := restartDelay(5, 0, 0); got != 0 {
		t.Errorf("no backoff configured: %v", got)
	}
}

// A worker that dies on every image is restarted at once the first time, then held
// back (503 with a wait, no new process) until the backoff passes; an answer from
// a worker clears the count.
func TestCrashLoopBacksOff(t *testing.T) {
	e := newFake(t, 1, 1)
	e.cfg.RestartBackoff, e.cfg.MaxRestartBackoff = 300*time.Millisecond, time.Second
	crash := func() {
		t.Helper()
		if _, err := e.Transform(context.Background(), strings.NewReader("exit"), opts); !errors.Is(err, errWorkerDied) {
			t.Fatalf("crashing image: %v", err)
		}
	}
	crash() // starts 1
	crash() // the first death: restarted at once (starts 2), and it dies too
	if e.Starts() != 2 {
		t.Fatalf("starts %d, want 2", e.Starts())
	}
	_, err := e.Transform(context.Background(), strings.NewReader("ok"), opts)
	var later *imaging.RetryLater
	if !errors.As(err, &later) || codeOf(err) != coffer.EUNAVAILABLE || later.After <= 0 || later.After > 300*time.Millisecond {
		t.Fatalf("after two deaths in a row: %v (want EUNAVAILABLE with a wait up to 300ms)", err)
	}
	if e.Starts() != 2 {
		t.Fatalf("a worker started during the backoff: starts %d", e.Starts())
	}
	time.Sleep(later.After)
	if res, err := e.Transform(context.Background(), strings.NewReader("ok"), opts); err != nil || string(res.Data) != "ko" {
		t.Fatalf("after the backoff: %v %v", res, err)
	}
	// The answer cleared the failures: one more death restarts at once again.
	crash()
	if res, err := e.Transform(context.Background(), strings.NewReader("ab"), opts); err != nil || string(res.Data) != "ba" {
		t.Fatalf("after a single death: %v %v", res, err)
	}
	if e.Starts() != 4 { // the crash used worker 3; "ab" started worker 4
		t.Errorf("starts %d, want 4", e.Starts())
	}
}

// A worker that stops starting (its binary broken after an upgrade, say) costs one
// attempt per backoff period, not one per request, and comes back when it is fixed.
func TestFailedStartsBackOff(t *testing.T) {
	e := newFake(t, 1, 1)
	e.cfg.RestartBackoff, e.cfg.MaxRestartBackoff = 300*time.Millisecond, time.Second
	good := e.cfg.Path
	e.mu.Lock()
	e.cfg.Path = "/bin/true" // exits without a hello
	e.mu.Unlock()
	var later *imaging.RetryLater
	for i, wantStart := range []bool{true, true, false, false} {
		start := time.Now()
		_, err := e.Transform(context.Background(), strings.NewReader("ok"), opts)
		if !errors.As(err, &later) || codeOf(err) != coffer.EUNAVAILABLE {
			t.Fatalf("transform %d: %v", i, err)
		}
		// The first two try to start the worker (and say why it failed); the next ones
		// answer at once from the backoff.
		if got := strings.Contains(err.Error(), "did not start") && strings.Contains(err.Error(), "hello"); got != wantStart {
			t.Fatalf("transform %d: %v", i, err)
		}
		if !wantStart && time.Since(start) > 100*time.Millisecond {
			t.Fatalf("transform %d during the backoff took %v", i, time.Since(start))
		}
	}
	e.mu.Lock()
	e.cfg.Path = good
	e.mu.Unlock()
	time.Sleep(later.After)
	if res, err := e.Transform(context.Background(), strings.NewReader("ok"), opts); err != nil || string(res.Data) != "ko" {
		t.Fatalf("after the fix: %v %v", res, err)
	}
}

// A transform that finds its worker already gone (its request cannot be written) is a
// death, 503, and does not count as an answer: it must not clear the failure count
// that holds a crash loop back. Nor is it a crash caused by its image (no CrashError),
// which would count towards quarantining an innocent image.
func TestGoneWorkerIsNotAnAnswer(t *testing.T) {
	e := newFake(t, 1, 1)
	e.cfg.RestartBackoff, e.cfg.MaxRestartBackoff = time.Hour, time.Hour
	for i := range 3 { // each round starts a worker
		if _, err := e.Transform(context.Background(), strings.NewReader("ok"), opts); err != nil {
			t.Fatal(err)
		}
		e.mu.Lock()
		e.failures, e.notBefore = 5, time.Now().Add(time.Hour) // a crash loop in progress
		e.w.peer.closeWrite()                                  // the child reads EOF and exits
		e.mu.Unlock()
		_, err := e.Transform(context.Background(), strings.NewReader("ok"), opts)
		e.mu.Lock()
		failures := e.failures
		e.failures, e.notBefore = 0, time.Time{}
		e.mu.Unlock()
		var crash *imaging.CrashError
		if codeOf(err) != coffer.EUNAVAILABLE || failures < 5 || errors.As(err, &crash) {
			t.Fatalf("round %d: a transform on a gone worker: %v, failures %d (want 503, no CrashError, and at least 5)", i, err, failures)
		}
	}
}

// A transformation the server stopped waiting for (its client went away) may still be
// running in the worker. When the worker then dies, it counts among those in flight:
// a transformation started beside it must not look like the only suspect, or anyone
// could get another user's image quarantined by abandoning a crashing one of their own.
func TestAbandonedCallsCountAsInFlight(t *testing.T) {
	e := newFake(t, 2, 2)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := e.Transform(ctx, strings.NewReader("stubborn-exit:500ms"), opts); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("abandoned transformation: %v", err)
	}
	_, err := e.Transform(context.Background(), strings.NewReader("sleep:5s"), opts)
	var crash *imaging.CrashError
	if !errors.As(err, &crash) || crash.InFlight != 2 {
		t.Fatalf("the worker died under a transformation beside an abandoned one: %v (crash %+v), want InFlight 2", err, crash)
	}
	// The abandoned call's entry is gone with the worker; a new one works.
	if res, err := e.Transform(context.Background(), strings.NewReader("ab"), opts); err != nil || string(res.Data) != "ba" {
		t.Fatalf("after the crash: %v %v", res, err)
	}
}
