package bench

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// op performs one request for a worker; start is when the request was due (now in
// closed loop, the intended arrival in open loop).
type op interface {
	do(ctx context.Context, w *workerState, start time.Time) outcome
}

// closer is implemented by ops that hold a connection of their own; the worker closes
// it when it stops, so a ramp down does not leave idle connections on the server.
type closer interface{ close() }

// closeOp releases what o holds, if anything.
func closeOp(o op) {
	if c, ok := o.(closer); ok {
		c.close()
	}
}

// pacer is implemented by ops that pause between requests, like a virtual user
// between visits: the worker sleeps wait() before its next request, and stops
// instead when its level drops or the run ends meanwhile. Closed loop only.
type pacer interface{ wait() time.Duration }

// workerState is what one worker owns and reuses across its requests.
type workerState struct {
	id  int
	buf []byte // body discard buffer; nil with loadSpec.pooledBuf (the op brings one)
	seq int    // requests made, for unique upload names
	op  op
}

// loadSpec is one run of one scenario against one endpoint.
type loadSpec struct {
	sched    Schedule
	rate     float64 // open loop when above 0
	workers  int     // open loop: the concurrency cap
	interval time.Duration
	graceful time.Duration
	newOp    func(ctx context.Context, id int) op
	// pooledBuf: the ops take a body buffer from a pool per request, so workers need
	// none of their own (thousands of mostly idle virtual users).
	pooledBuf bool
	onTick    func(p Point, elapsed time.Duration)
}

// generator drives one loadSpec.
type generator struct {
	spec    loadSpec
	rec     *recorder
	level   atomic.Int64 // closed loop: workers with an id below this run
	busy    atomic.Int64 // open loop: workers inside a request
	active  []atomic.Bool
	wg      sync.WaitGroup
	points  []Point
	start   time.Time
	elapsed time.Duration
}

// controlPeriod is how often the closed-loop controller adjusts the worker count;
// the open-loop dispatcher releases arrivals every dispatchPeriod.
const (
	controlPeriod  = 20 * time.Millisecond
	dispatchPeriod = time.Millisecond
)

// runLoad runs spec until its schedule ends or ctx is cancelled, then lets in-flight
// requests finish for up to spec.graceful and cancels the rest (those are not
// counted).
func runLoad(ctx context.Context, spec loadSpec) *generator {
	g := &generator{spec: spec, start: time.Now()}
	g.rec = newRecorder(g.start)
	reqCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	if spec.rate > 0 {
		g.runOpen(ctx, reqCtx)
	} else {
		g.runClosed(ctx, reqCtx)
	}
	g.drain(cancel)
	g.elapsed = time.Since(g.start)
	g.tick(time.Now(), 0)
	return g
}

// drain waits for the workers, cancelling their requests after the graceful period.
func (g *generator) drain(cancel context.CancelFunc) {
	done := make(chan struct{})
	go func() { g.wg.Wait(); close(done) }()
	t := time.NewTimer(g.spec.graceful)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		cancel()
		<-done
	}
}

func (g *generator) tick(now time.Time, workers int) {
	p := g.rec.Tick(now, workers)
	g.points = append(g.points, p)
	if g.spec.onTick != nil {
		g.spec.onTick(p, now.Sub(g.start))
	}
}

// runClosed keeps Level(t) workers busy, each sending its next request when the
// previous one ends.
func (g *generator) runClosed(ctx, reqCtx context.Context) {
	g.active = make([]atomic.Bool, g.spec.sched.Peak())
	t := time.NewTicker(controlPeriod)
	defer t.Stop()
	nextTick := g.start.Add(g.spec.interval)
	for now := g.start; ; {
		el := now.Sub(g.start)
		if el >= g.spec.sched.Duration() || ctx.Err() != nil {
			break
		}
		lvl := g.spec.sched.Level(el)
		g.level.Store(int64(lvl))
		g.spawn(reqCtx, lvl)
		if !now.Before(nextTick) {
			g.tick(now, lvl)
			nextTick = nextTick.Add(g.spec.interval)
		}
		select {
		case <-ctx.Done():
		case now = <-t.C:
		}
	}
	g.level.Store(0)
}

// spawn starts the workers below lvl that are not running.
func (g *generator) spawn(ctx context.Context, lvl int) {
	for i := 0; i < lvl; i++ {
		if g.active[i].CompareAndSwap(false, true) {
			g.wg.Add(1)
			go g.closedWorker(ctx, i)
		}
	}
}

func (g *generator) closedWorker(ctx context.Context, id int) {
	defer g.wg.Done()
	defer g.active[id].Store(false)
	w := g.newWorker(ctx, id)
	defer closeOp(w.op)
	sh := g.rec.shardFor(id)
	p, _ := w.op.(pacer)
	for int64(id) < g.level.Load() && ctx.Err() == nil {
		if p != nil {
			if d := p.wait(); d > 0 {
				sleepCtx(ctx, d)
				continue // the level and ctx are checked again
			}
		}
		o := w.op.do(ctx, w, time.Now())
		if ctx.Err() != nil {
			return // cancelled: neither a result nor an error of the server
		}
		sh.record(&o)
	}
}

func (g *generator) newWorker(ctx context.Context, id int) *workerState {
	w := &workerState{id: id, op: g.spec.newOp(ctx, id)}
	if !g.spec.pooledBuf {
		w.buf = make([]byte, 64<<10)
	}
	return w
}

// sleepCtx sleeps for d or until ctx is done.
func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
