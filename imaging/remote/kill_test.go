package remote

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/imaging"
)

// childCPU returns the user+system CPU time of process pid from /proc/pid/stat
// (clock ticks of 10 ms).
func childCPU(t *testing.T, pid int) time.Duration {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:])) // f[0] is field 3 (state)
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		t.Fatalf("parsing /proc/%d/stat: %q", pid, b)
	}
	return time.Duration(ut+st) * 10 * time.Millisecond
}

// expensiveJob is a source and options that cost seconds of CPU in the worker (a
// σ100 blur of a 1600×1600 canvas), with limits that let it run.
func expensiveJob(t *testing.T, c *Config) ([]byte, imaging.Options) {
	c.Imaging.MaxCost, c.Imaging.Timeout = 1<<62, time.Hour
	return testJPEG(t, 1600, 1600), imaging.Options{Width: 1600, Height: 1600, Fit: imaging.FitFill, Blur: 100, Format: imaging.JPEG}
}

// childPid returns the running child's pid.
func (e *Engine) childPid() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.w.peer.(*child).cmd.Process.Pid
}

// awaitBusyChild waits until the child has used at least d of CPU.
func awaitBusyChild(t *testing.T, pid int, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for childCPU(t, pid) < d {
		if time.Now().After(deadline) {
			t.Fatalf("the worker did not start computing")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// assertIdleChild fails unless the child's CPU time stops growing 100 ms after
// when: over the following 500 ms it may grow by 30 ms at most (clock ticks).
func assertIdleChild(t *testing.T, pid int, when time.Time) {
	t.Helper()
	time.Sleep(time.Until(when.Add(100 * time.Millisecond)))
	before := childCPU(t, pid)
	time.Sleep(500 * time.Millisecond)
	if grew := childCPU(t, pid) - before; grew > 30*time.Millisecond {
		t.Errorf("the worker's CPU time grew by %v in the 500 ms from 100 ms after the client left", grew)
	}
}

// The worker's CPU for an abandoned transformation stops within 100 ms of the client
// leaving, and the worker's slot is free for the next transformation.
func TestAbandonedTransformStopsWorkerCPU(t *testing.T) {
	var src []byte
	var o imaging.Options
	e := newReal(t, func(c *Config) { c.Imaging.Workers = 1; src, o = expensiveJob(t, c) })
	if _, err := e.Transform(context.Background(), bytes.NewReader(testJPEG(t, 16, 16)), imaging.Options{Width: 9}); err != nil {
		t.Fatal(err) // starts the child
	}
	pid := e.childPid()
	base := childCPU(t, pid)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { _, err := e.Transform(ctx, bytes.NewReader(src), o); errc <- err }()
	awaitBusyChild(t, pid, base+300*time.Millisecond)
	cancel()
	left := time.Now()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	assertIdleChild(t, pid, left)
	start := time.Now()
	if _, err := e.Transform(context.Background(), bytes.NewReader(testJPEG(t, 16, 16)), imaging.Options{Width: 9}); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 2*time.Second { // the abandoned one alone would take several seconds more
		t.Errorf("the next transformation took %v", d)
	}
}

// The reproducer: four expensive transformations each abandoned by their
// client, then a cheap one, which must not wait for them; the worker goes idle.
func TestFourAbandonedThenCheap(t *testing.T) {
	var src []byte
	var o imaging.Options
	e := newReal(t, func(c *Config) { c.Imaging.Workers, c.Imaging.Queue = 2, 8; src, o = expensiveJob(t, c) })
	if _, err := e.Transform(context.Background(), bytes.NewReader(testJPEG(t, 16, 16)), imaging.Options{Width: 9}); err != nil {
		t.Fatal(err)
	}
	pid := e.childPid()
	var left time.Time
	for i := range 4 {
		oi := o
		oi.Blur -= float64(i) // distinct, as the b=90..93
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		_, err := e.Transform(ctx, bytes.NewReader(src), oi)
		cancel()
		left = time.Now()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("abandoned %d: %v", i, err)
		}
	}
	start := time.Now()
	if _, err := e.Transform(context.Background(), bytes.NewReader(testJPEG(t, 16, 16)), imaging.Options{Width: 9}); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 2*time.Second { // four abandoned ones would take over 10 s
		t.Errorf("the cheap transformation took %v after four abandoned ones", d)
	}
	assertIdleChild(t, pid, left)
}

// A child that does not stop a cancelled transformation within KillGrace is killed,
// so that it cannot hold its worker for good; the next transformation starts a new one.
func TestKillGraceKillsStuckWorker(t *testing.T) {
	e := newFake(t, 1, 2)
	e.cfg.KillGrace = 200 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := e.Transform(ctx, strings.NewReader("stubborn-exit:20s"), opts); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("abandoned transformation: %v", err)
	}
	pid := e.childPid()
	deadline := time.Now().Add(5 * time.Second)
	for !e.w.dead() {
		if time.Now().After(deadline) {
			t.Fatalf("the stuck worker %d is still alive 5 s after its transformation was cancelled", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if res, err := e.Transform(context.Background(), strings.NewReader("ab"), opts); err != nil || string(res.Data) != "ba" {
		t.Fatalf("after the kill: %v %v", res, err)
	}
}

// A child that never answers is given up on after Imaging.Timeout plus KillGrace:
// EUNAVAILABLE naming the wait.
func TestServerWaitsAtMostTimeoutPlusGrace(t *testing.T) {
	e := newFake(t, 1, 2)
	e.cfg.Imaging.Timeout, e.cfg.KillGrace = 200*time.Millisecond, 200*time.Millisecond
	_, err := e.Transform(context.Background(), strings.NewReader("stubborn-exit:20s"), opts)
	if coffer.ErrorCode(err) != coffer.EUNAVAILABLE || !strings.Contains(coffer.ErrorMessage(err), "did not answer within 400ms") {
		t.Fatalf("err = %v, want EUNAVAILABLE after 400ms", err)
	}
}
