package imaging

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/coffer/coffer"
)

// Errors of Pool.Do. ErrBusy and ErrClosed are EUNAVAILABLE (HTTP 503), ErrUserBusy
// is ETOOMANY (HTTP 429): answer ErrBusy and ErrUserBusy with a Retry-After header.
// Compare with errors.Is.
var (
	ErrBusy     error = &coffer.Error{Code: coffer.EUNAVAILABLE, Message: "too many image transformations are waiting; retry later"}
	ErrUserBusy error = &coffer.Error{Code: coffer.ETOOMANY, Message: "too many of your image transformations are running or waiting; retry later"}
	ErrClosed   error = &coffer.Error{Code: coffer.EUNAVAILABLE, Message: "image transformations are shutting down"}
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

// userKey is the context key of WithUser.
type userKey struct{}

// WithUser returns ctx carrying key, the user on whose behalf transformations run:
// Pool caps how many workers and queue places one key holds. Callers shape keys so
// that they cannot collide across kinds of principal (e.g. "user:<id>",
// "ip:<addr>"); a tenant prefix can be added in front. An empty key is uncapped.
func WithUser(ctx context.Context, key string) context.Context {
	return context.WithValue(ctx, userKey{}, key)
}

// UserOf returns the key WithUser put in ctx, "" if none.
func UserOf(ctx context.Context) string {
	k, _ := ctx.Value(userKey{}).(string)
	return k
}

// Pool bounds concurrent work: at most Workers functions run at once and at most Queue
// callers wait for a worker; further callers are refused at once with ErrBusy rather
// than piling up. A waiting caller whose context ends leaves the queue immediately.
// Pool starts no goroutines: each function runs on its caller's goroutine.
//
// A fair pool (NewFairPool) also caps each user (WithUser): at most UserWorkers of
// the workers and UserQueue places in the queue each, so that one user can neither
// hold every worker nor fill the queue; a user beyond the queue cap gets
// ErrUserBusy. Freed workers go to the longest-waiting caller whose user is below
// the cap.
type Pool struct {
	workers, queue         int
	userWorkers, userQueue int
	closing                chan struct{} // closed by Close

	mu      sync.Mutex // guards the fields below
	closed  bool
	busy    int
	waiting []*waiter // in arrival order
	users   map[string]*usage
	running sync.WaitGroup
}

// waiter is a caller in the queue; ready is closed when it is granted a worker.
type waiter struct {
	user    string
	ready   chan struct{}
	granted bool
}

// usage is what one user holds.
type usage struct{ running, queued int }

// NewPool returns a pool of workers (at least 1) and a queue of the given length,
// with no per-user caps.
func NewPool(workers, queue int) *Pool {
	workers, queue = max(workers, 1), max(queue, 0)
	return NewFairPool(workers, queue, workers, queue)
}

// NewFairPool returns a pool of workers and a queue of the given length in which
// one user holds at most userWorkers workers (at least 1) and userQueue places in
// the queue.
func NewFairPool(workers, queue, userWorkers, userQueue int) *Pool {
	workers = max(workers, 1)
	return &Pool{
		workers: workers, queue: max(queue, 0),
		userWorkers: min(max(userWorkers, 1), workers), userQueue: max(userQueue, 0),
		closing: make(chan struct{}), users: make(map[string]*usage),
	}
}

// Do runs fn on a worker, waiting in the queue if all are busy (or ctx's user holds
// its share). It returns fn's error, ErrBusy if the queue is full, ErrUserBusy if
// the user's share of it is, ErrClosed after Close, or ctx.Err() if ctx ends while
// waiting (fn is then never called).
func (p *Pool) Do(ctx context.Context, fn func(context.Context) error) error {
	user := UserOf(ctx)
	if err := p.acquire(ctx, user); err != nil {
		return err
	}
	defer p.release(user)
	return fn(ctx)
}

// acquire takes a worker, waiting in the queue if needed.
func (p *Pool) acquire(ctx context.Context, user string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	w, err := p.enter(user)
	if w == nil {
		return err
	}
	select {
	case <-w.ready:
		return nil
	case <-ctx.Done():
		return p.leave(w, ctx.Err())
	case <-p.closing:
		return p.leave(w, ErrClosed)
	}
}

// enter takes a worker at once (nil, nil), queues the caller (a waiter), or refuses.
func (p *Pool) enter(user string) (*waiter, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, ErrClosed
	}
	u := p.usage(user)
	if p.busy < p.workers && p.mayRun(user, u) {
		p.grant(user, u)
		return nil, nil
	}
	if user != "" && u.queued >= p.userQueue {
		p.forget(user, u)
		return nil, ErrUserBusy
	}
	if len(p.waiting) >= p.queue {
		p.forget(user, u)
		return nil, ErrBusy
	}
	w := &waiter{user: user, ready: make(chan struct{})}
	u.queued++
	p.waiting = append(p.waiting, w)
	return w, nil
}

// leave takes w out of the queue after its context ended or the pool closed,
// giving back the worker it was granted meanwhile, if any, and returns err.
func (p *Pool) leave(w *waiter, err error) error {
	p.mu.Lock()
	granted := w.granted
	if !granted {
		p.waiting = slices.DeleteFunc(p.waiting, func(x *waiter) bool { return x == w })
		u := p.users[w.user]
		u.queued--
		p.forget(w.user, u)
	}
	p.mu.Unlock()
	if granted {
		p.release(w.user)
	}
	return err
}

// release gives a worker back and hands it to the first waiter that may run.
func (p *Pool) release(user string) {
	p.mu.Lock()
	p.busy--
	u := p.users[user]
	u.running--
	p.forget(user, u)
	p.dispatch()
	p.mu.Unlock()
	p.running.Done()
}

// dispatch grants free workers to waiters in arrival order, skipping those whose
// user holds its share. Called with p.mu held.
func (p *Pool) dispatch() {
	for i := 0; i < len(p.waiting) && p.busy < p.workers && !p.closed; {
		w := p.waiting[i]
		u := p.users[w.user]
		if !p.mayRun(w.user, u) {
			i++
			continue
		}
		p.waiting = slices.Delete(p.waiting, i, i+1)
		u.queued--
		p.grant(w.user, u)
		w.granted = true
		close(w.ready)
	}
}

// mayRun reports whether user may take one more worker. Called with p.mu held.
func (p *Pool) mayRun(user string, u *usage) bool {
	return user == "" || u.running < p.userWorkers
}

// grant counts a worker as taken by user. Called with p.mu held.
func (p *Pool) grant(user string, u *usage) {
	p.busy++
	u.running++
	p.running.Add(1)
}

// usage returns user's usage, creating it. Called with p.mu held.
func (p *Pool) usage(user string) *usage {
	u := p.users[user]
	if u == nil {
		u = &usage{}
		p.users[user] = u
	}
	return u
}

// forget drops the usage of a user that holds nothing. Called with p.mu held.
func (p *Pool) forget(user string, u *usage) {
	if u.running == 0 && u.queued == 0 {
		delete(p.users, user)
	}
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
func (p *Pool) Busy() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.busy
}

// Queued returns the number of callers waiting for a worker (a gauge for metrics).
func (p *Pool) Queued() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.waiting)
}

// Workers returns the number of workers.
func (p *Pool) Workers() int { return p.workers }

// QueueLen returns the most callers that may wait.
func (p *Pool) QueueLen() int { return p.queue }

// UserWorkers returns the most workers one user may hold.
func (p *Pool) UserWorkers() int { return p.userWorkers }
