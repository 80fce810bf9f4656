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
// Start raises GOGC while the live heap is small, so the heap goal stays near the
// floor. As the live heap grows (a full content cache, many uploads), GOGC falls back
// to its base and the floor stops mattering. The extra memory is at most about the
// floor. The runtime's own minimum heap scales with GOGC (4 MB × GOGC/100), which
// caps the raised GOGC at floor/4 MB × 100.
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
// heap of live bytes, and never below base.
func Percent(floor, live uint64, base int) int {
	if floor <= minHeap || base <= 0 {
		return base
	}
	ceiling := int(floor * 100 / minHeap) // the runtime's floor then equals ours
	if ceiling <= base {
		return base
	}
	if live == 0 {
		return ceiling
	}
	want := int(floor*100/live) - 100 // goal = live × (1 + want/100) = floor
	return max(base, min(want, ceiling))
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
		sample: []metrics.Sample{{Name: "/gc/heap/live:bytes"}}}
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
	var live uint64
	if t.sample[0].Value.Kind() == metrics.KindUint64 {
		live = t.sample[0].Value.Uint64()
	}
	p := Percent(t.floor, live, t.base)
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
