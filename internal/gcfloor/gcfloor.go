// Package gcfloor keeps Go's garbage collector from running on a tiny heap.
//
// With GOGC=100 the runtime sets the next heap goal at twice the live heap and never
// below 4 MB. A coffer node serving cached downloads has a live heap of about 2 MB
// and allocates about 5 KB per request. At 20,000 requests/s it collected about 45
// times a second. Each cycle scans every goroutine stack and shrinks the stacks of
// idle connections, and the next request on each connection grows its stack again. Measured
// on the 100 KB GET benchmark (2 vCPUs), that cost about a fifth of the server's
// CPU.
//
// Start raises GOGC while the heap is small, so the heap goal stays near the floor.
// The runtime sets the goal at live + (live + stacks + globals) × GOGC/100, so
// goroutine stacks count as well as the live heap: with many connections (each
// serving goroutine has a stack) or a large live heap (a full content cache, many
// uploads), the goal at the base GOGC already reaches the floor, GOGC stays at its
// base and the floor stops mattering. The extra memory is at most about the floor.
// The runtime's own minimum heap scales with GOGC (4 MB × GOGC/100), which caps the
// raised GOGC at floor/4 MB × 100.
package gcfloor

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
)

// minHeap is the runtime's heap goal floor at GOGC=100.
const minHeap = 4 << 20

// Percent returns the GOGC that keeps the heap goal at about floor bytes for a live
// heap of live bytes and roots bytes of goroutine stacks and globals to scan, and
// never below base.
func Percent(floor, live, roots uint64, base int) int {
	if floor <= minHeap || base <= 0 {
		return base
	}
	ceiling := int(floor * 100 / minHeap) // the runtime's floor then equals ours
	if ceiling <= base || live >= floor {
		return base
	}
	if live+roots == 0 {
		return ceiling
	}
	// goal = live + (live + roots) × want/100 = floor
	want := (floor - live) * 100 / (live + roots)
	return max(base, int(min(want, uint64(ceiling))))
}

// Tuner adjusts GOGC after every garbage collection. Stop it with Stop.
type Tuner struct {
	floor   uint64
	base    int
	stopped atomic.Bool
	mu      sync.Mutex
	current int
	sample  []metrics.Sample
	cycles  atomic.Int64
}

// Start tunes GOGC for a heap floor of floor bytes. It returns nil, tuning nothing, if
// floor is at most the runtime's 4 MB, or if GOGC is set in the environment (the
// operator's choice wins). Base is the GOGC the runtime started with.
func Start(floor uint64) *Tuner {
	if floor <= minHeap || os.Getenv("GOGC") != "" {
		return nil
	}
	base := debug.SetGCPercent(100)
	debug.SetGCPercent(base)
	if base <= 0 { // GC off
		return nil
	}
	t := &Tuner{floor: floor, base: base, current: base,
		sample: []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/gc/scan/stack:bytes"}, {Name: "/gc/scan/globals:bytes"}}}
	t.adjust()
	t.arm()
	return t
}

// sentinel is garbage made on purpose: its cleanup runs after the collection that
// finds it unreachable, once per cycle. It holds a pointer so that it is not a tiny
// allocation, which could share a block with live data and never be collected.
type sentinel struct {
	_ *byte
	_ [8]byte
}

func (t *Tuner) arm() {
	runtime.AddCleanup(new(sentinel), func(t *Tuner) {
		if t.stopped.Load() {
			return
		}
		t.cycles.Add(1)
		t.adjust()
		t.arm()
	}, t)
}

func (t *Tuner) adjust() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopped.Load() {
		return
	}
	metrics.Read(t.sample)
	var v [3]uint64
	for i, s := range t.sample {
		if s.Value.Kind() == metrics.KindUint64 {
			v[i] = s.Value.Uint64()
		}
	}
	p := Percent(t.floor, v[0], v[1]+v[2], t.base)
	// Setting GOGC recomputes the pacer; skip changes under a tenth.
	if d := p - t.current; d*10 > t.current || -d*10 > t.current || (p == t.base && t.current != t.base) {
		debug.SetGCPercent(p)
		t.current = p
	}
}

// GOGC is the value last set.
func (t *Tuner) GOGC() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.current
}

// Cycles counts the collections the tuner has seen.
func (t *Tuner) Cycles() int64 { return t.cycles.Load() }

// Stop restores the base GOGC and stops tuning.
func (t *Tuner) Stop() {
	if t == nil || t.stopped.Swap(true) {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	debug.SetGCPercent(t.base)
	t.current = t.base
}
