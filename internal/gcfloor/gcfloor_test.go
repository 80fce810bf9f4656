package gcfloor

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"testing"
	"time"
)

func TestPercent(t *testing.T) {
	const mb = 1 << 20
	for _, c := range []struct {
		floor, live, roots uint64
		base, want         int
	}{
		{16 * mb, 2 * mb, 0, 100, 400},  // capped: the runtime's 4 MB × 4 is the floor
		{16 * mb, 4 * mb, 0, 100, 300},  // 4 + 4 × 3 = 16
		{16 * mb, 5 * mb, 0, 100, 220},  // 5 + 5 × 2.2 = 16
		{16 * mb, 8 * mb, 0, 100, 100},  // 8 + 8 × 1 = 16: the base is enough
		{16 * mb, 40 * mb, 0, 100, 100}, // a big heap: the floor no longer matters
		{16 * mb, 0, 0, 100, 400},
		{16 * mb, 2 * mb, 2 * mb, 100, 350},  // 2 + (2 + 2) × 3.5 = 16
		{16 * mb, 2 * mb, 6 * mb, 100, 175},  // 2 + (2 + 6) × 1.75 = 16
		{16 * mb, 2 * mb, 40 * mb, 100, 100}, // 5000 idle connections' stacks: the base is more than enough
		{16 * mb, 0, 40 * mb, 100, 100},
		{4 * mb, 1 * mb, 0, 100, 100},  // no floor above the runtime's own
		{0, 1 * mb, 0, 100, 100},       // off
		{16 * mb, 2 * mb, 0, 500, 500}, // a higher base stays
		{64 * mb, 2 * mb, 0, 100, 1600},
		{16 * mb, 2 * mb, 0, -1, -1}, // GC off stays off
	} {
		if got := Percent(c.floor, c.live, c.roots, c.base); got != c.want {
			t.Errorf("Percent(floor %d MB, live %d MB, roots %d MB, base %d) = %d, want %d", c.floor/mb, c.live/mb, c.roots/mb, c.base, got, c.want)
		}
	}
}

// TestTunerFollowsLiveHeap runs the tuner in this process: a small heap gets the
// raised GOGC, a live heap above the floor brings it back to the base, and Stop
// restores the base.
func TestTunerFollowsLiveHeap(t *testing.T) {
	t.Setenv("GOGC", "")
	if Start(4<<20) != nil {
		t.Fatal("a floor at the runtime's own minimum should not start a tuner")
	}
	tu := Start(16 << 20)
	if tu == nil {
		t.Fatal("no tuner")
	}
	defer tu.Stop()
	runtime.GC()
	waitFor(t, tu, func() bool { return tu.GOGC() > 100 }, "raised GOGC with a small heap")
	if got := gogc(); got != tu.GOGC() {
		t.Fatalf("runtime GOGC %d, tuner says %d", got, tu.GOGC())
	}

	live := make([][]byte, 48) // 48 MB, live and touched
	for i := range live {
		live[i] = make([]byte, 1<<20)
		for j := 0; j < len(live[i]); j += 4096 {
			live[i][j] = 1
		}
	}
	runtime.GC()
	waitFor(t, tu, func() bool { return tu.GOGC() == 100 }, "GOGC back to 100 with a 48 MB live heap")
	runtime.KeepAlive(live)
	live = nil
	runtime.GC()
	waitFor(t, tu, func() bool { return tu.GOGC() > 100 }, "raised GOGC again once the heap is small")

	tu.Stop()
	if got := gogc(); got != 100 {
		t.Fatalf("after Stop GOGC = %d, want 100", got)
	}
}

func TestGOGCFromEnvironmentWins(t *testing.T) {
	t.Setenv("GOGC", "100")
	if tu := Start(16 << 20); tu != nil {
		tu.Stop()
		t.Fatal("tuner started although GOGC is set")
	}
}

func gogc() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

// waitFor collects garbage until cond holds (the tuner adjusts after each cycle).
func waitFor(t *testing.T, tu *Tuner, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: GOGC stays %d after %d cycles", what, tu.GOGC(), tu.Cycles())
		}
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
}

var release = make(chan struct{})

// deep parks on release with about n KB of stack in use, like a goroutine serving an
// idle keep-alive connection.
//
//go:noinline
func deep(n int) byte {
	var b [1024]byte
	b[n%1024] = byte(n)
	if n > 0 {
		return deep(n-1) + b[n%1024]
	}
	<-release
	return b[0]
}

// TestTunerCountsStacks: goroutine stacks add to the heap goal like live heap does
// (the runtime's goal is live + (live + stacks + globals) × GOGC/100), so with 3000
// parked goroutines of about 12 KB each the base GOGC already gives a goal above the
// floor and the tuner must not multiply the stacks by raising it.
func TestTunerCountsStacks(t *testing.T) {
	t.Setenv("GOGC", "")
	tu := Start(16 << 20)
	if tu == nil {
		t.Fatal("no tuner")
	}
	defer tu.Stop()
	runtime.GC()
	waitFor(t, tu, func() bool { return tu.GOGC() > 100 }, "raised GOGC with a small heap and few goroutines")
	var wg sync.WaitGroup
	for range 3000 {
		wg.Add(1)
		go func() { defer wg.Done(); deep(12) }()
	}
	waitFor(t, tu, func() bool { return tu.GOGC() == 100 }, "GOGC back to 100 with 36 MB of stacks")
	goal := []metrics.Sample{{Name: "/gc/heap/goal:bytes"}}
	metrics.Read(goal)
	t.Logf("3000 parked goroutines: GOGC %d, heap goal %d MB", tu.GOGC(), goal[0].Value.Uint64()>>20)
	close(release)
	wg.Wait()
	waitFor(t, tu, func() bool { return tu.GOGC() > 100 }, "raised GOGC again once the goroutines are gone")
}
