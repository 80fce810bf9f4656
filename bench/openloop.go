package bench

import (
	"context"
	"time"
)

// runOpen releases arrivals at rate × LevelF(t)/Peak per second to a fixed pool of
// spec.workers workers; an arrival that finds none free is dropped (and counted).
// Latency counts from each arrival's due time, so queueing inside the generator or
// the server is not hidden (no coordinated omission).
func (g *generator) runOpen(ctx, reqCtx context.Context) {
	arrivals := make(chan time.Time, g.spec.workers)
	for i := 0; i < g.spec.workers; i++ {
		g.wg.Add(1)
		go g.openWorker(reqCtx, i, arrivals)
	}
	defer close(arrivals)
	dropped := g.rec.shardFor(0)
	t := time.NewTicker(dispatchPeriod)
	defer t.Stop()
	nextTick := g.start.Add(g.spec.interval)
	due, last := 0.0, g.start
	peak := float64(g.spec.sched.Peak())
	for now := g.start; ; {
		el := now.Sub(g.start)
		if el >= g.spec.sched.Duration() || ctx.Err() != nil {
			return
		}
		due += g.spec.rate * g.spec.sched.LevelF(el) / peak * now.Sub(last).Seconds()
		last = now
		for ; due >= 1; due-- {
			select {
			case arrivals <- now:
			default:
				dropped.record(&outcome{kind: kindDropped})
			}
		}
		if !now.Before(nextTick) {
			g.tick(now, int(g.busy.Load()))
			nextTick = nextTick.Add(g.spec.interval)
		}
		select {
		case <-ctx.Done():
		case now = <-t.C:
		}
	}
}

func (g *generator) openWorker(ctx context.Context, id int, arrivals <-chan time.Time) {
	defer g.wg.Done()
	w := g.newWorker(ctx, id)
	defer closeOp(w.op)
	sh := g.rec.shardFor(id)
	for due := range arrivals {
		if ctx.Err() != nil {
			continue // drain the channel without sending
		}
		g.busy.Add(1)
		o := w.op.do(ctx, w, due)
		g.busy.Add(-1)
		if ctx.Err() == nil {
			sh.record(&o)
		}
	}
}
