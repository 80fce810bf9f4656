package imaging

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coffer/coffer"
)

// Errors of Pool.Do. Both are EUNAVAILABLE (HTTP 503): answer ErrBusy with a
// Retry-After header. Compare with errors.Is.
var (
	ErrBusy   error = &coffer.Error{Code: coffer.EUNAVAILABLE, Message: "too many image transformations are waiting; retry later"}
	ErrClosed error = &coffer.Error{Code: coffer.EUNAVAILABLE, Message: "image transformations are shutting down"}
)

// RetryLater is an EUNAVAILABLE error that says when trying again may succeed; the
// HTTP layer sends After as Retry-After (whole seconds, at least 1).
type RetryLater struct {
	Err   *coffer.Error
	After time.Duration
}

func (e *RetryLater) Error() string { return e.Err.Error() }
func (e *RetryLater) Unwrap() error { return e.Err }

// CrashError is the cause of a transformation that failed because the engine's
// process died under it (the coffer-imager worker). InFlight is how many
// transformations were running then: one of them may have killed it, so a source
// that was alone when the engine died twice is a likely culprit.
type CrashError struct {
	InFlight int
	Err      error
}

func (e *CrashError) Error() string { return e.Err.Error() }
func (e *CrashError) Unwrap() error { return e.Err }

// Pool bounds concurrent work: at most Workers functions run at once and at most Queue
// callers wait for a worker; further callers are refused at once with ErrBusy rather
// than piling up. A waiting caller whose context ends leaves the queue immediately.
// Pool starts no goroutines: each function runs on its caller's goroutine.
type Pool struct {
	workers chan struct{} // a send takes a worker
	queue   chan struct{} // a send takes a place in the queue
	closing chan struct{} // closed by Close

	mu      sync.Mutex // guards closed and running.Add against Close
	closed  bool
	running sync.WaitGroup

	busy, queued atomic.Int64
}

// NewPool returns a pool of workers (at least 1) and a queue of the given length.
func NewPool(workers, queue int) *Pool {
	return &Pool{
		workers: make(chan struct{}, max(workers, 1)),
		queue:   make(chan struct{}, max(queue, 0)),
		closing: make(chan struct{}),
	}
}

// Do runs fn on a worker, waiting in the queue if all are busy. It returns fn's error,
// ErrBusy if the queue is full, ErrClosed after Close, or ctx.Err() if ctx ends while
// waiting (fn is then never called).
func (p *Pool) Do(ctx context.Context, fn func(context.Context) error) error {
	if err := p.acquire(ctx); err != nil {
		return err
	}
	defer p.release()
	return fn(ctx)
}

// acquire takes a worker, waiting in the queue if needed.
func (p *Pool) acquire(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	select {
	case p.workers <- struct{}{}:
		return p.start()
	default:
	}
	select {
	case p.queue <- struct{}{}:
	default:
		return ErrBusy
	}
	p.queued.Add(1)
	defer func() { <-p.queue; p.queued.Add(-1) }()
	select {
	case p.workers <- struct{}{}:
		return p.start()
	case <-ctx.Done():
		return ctx.Err()
	case <-p.closing:
		return ErrClosed
	}
}

// start counts a worker just taken as running, or gives it back if the pool is closed.
func (p *Pool) start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		<-p.workers
		return ErrClosed
	}
	p.running.Add(1)
	p.busy.Add(1)
	return nil
}

func (p *Pool) release() {
	p.busy.Add(-1)
	<-p.workers
	p.running.Done()
}

// Close refuses new work with ErrClosed, sends queued callers away with ErrClosed and
// waits for running functions to return. It is safe to call more than once.
func (p *Pool) Close() {
	p.mu.Lock()
	if !p.closed {
		p.closed = true
		close(p.closing)
	}
	p.mu.Unlock()
	p.running.Wait()
}

// Busy returns the number of functions running now (a gauge for metrics).
func (p *Pool) Busy() int { return int(p.busy.Load()) }

// Queued returns the number of callers waiting for a worker (a gauge for metrics).
func (p *Pool) Queued() int { return int(p.queued.Load()) }

// Workers returns the number of workers.
func (p *Pool) Workers() int { return cap(p.workers) }

// QueueLen returns the most callers that may wait.
func (p *Pool) QueueLen() int { return cap(p.queue) }
