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

// groupKey is the context key of WithGroup.
type groupKey struct{}

// group is a set of users sharing one cap (a tenant's).
type group struct {
	key            string
	workers, queue int
}

// WithGroup returns ctx carrying the group key (a tenant) on whose behalf
// transformations run, with its caps: at most workers of the pool's workers and
// queue places in its queue for the whole group, beyond each user's own cap, so
// that one tenant flooding transformations (with any number of users) leaves the
// others their turn. workers and queue <= 0 take the pool's defaults (half its
// workers and a quarter of its queue, at least 1 each). An empty key is uncapped.
func WithGroup(ctx context.Context, key string, workers, queue int) context.Context {
	return context.WithValue(ctx, groupKey{}, group{key, workers, queue})
}

// groupOf returns the group WithGroup put in ctx.
func groupOf(ctx context.Context) group {
	g, _ := ctx.Value(groupKey{}).(group)
	return g
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
	groups  map[string]*usage // WithGroup's
	running sync.WaitGroup
}

// waiter is a caller in the queue; ready is closed when it is granted a worker.
type waiter struct {
	user    string
	group   group
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
		closing: make(chan struct{}), users: make(map[string]*usage), groups: make(map[string]*usage),
	}
}

// Do runs fn on a worker, waiting in the queue if all are busy (or ctx's user holds
// its share). It returns fn's error, ErrBusy if the queue is full, ErrUserBusy if
// the user's share of it is, ErrClosed after Close, or ctx.Err() if ctx ends while
// waiting (fn is then never called).
func (p *Pool) Do(ctx context.Context, fn func(context.Context) error) error {
	who := party{user: UserOf(ctx), group: groupOf(ctx)}
	if err := p.acquire(ctx, who); err != nil {
		return err
	}
	defer p.release(who)
	return fn(ctx)
}

// party is on whose behalf work runs: a user (WithUser) in a group (WithGroup).
type party struct {
	user  string
	group group
}

// acquire takes a worker, waiting in the queue if needed.
func (p *Pool) acquire(ctx context.Context, who party) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	w, err := p.enter(who)
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
func (p *Pool) enter(who party) (*waiter, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, ErrClosed
	}
	u, g := p.usage(p.users, who.user), p.usage(p.groups, who.group.key)
	if p.busy < p.workers && p.mayRun(who, u, g) {
		p.grant(u, g)
		return nil, nil
	}
	switch {
	case who.user != "" && u.queued >= p.userQueue, who.group.key != "" && g.queued >= p.groupQueue(who.group):
		p.forget(who, u, g)
		return nil, ErrUserBusy
	case len(p.waiting) >= p.queue:
		p.forget(who, u, g)
		return nil, ErrBusy
	}
	w := &waiter{user: who.user, group: who.group, ready: make(chan struct{})}
	u.queued++
	g.queued++
	p.waiting = append(p.waiting, w)
	return w, nil
}

// leave takes w out of the queue after its context ended or the pool closed,
// giving back the worker it was granted meanwhile, if any, and returns err.
func (p *Pool) leave(w *waiter, err error) error {
	who := party{w.user, w.group}
	p.mu.Lock()
	granted := w.granted
	if !granted {
		p.waiting = slices.DeleteFunc(p.waiting, func(x *waiter) bool { return x == w })
		u, g := p.users[w.user], p.groups[w.group.key]
		u.queued--
		g.queued--
		p.forget(who, u, g)
	}
	p.mu.Unlock()
	if granted {
		p.release(who)
	}
	return err
}

// release gives a worker back and hands it to the first waiter that may run.
func (p *Pool) release(who party) {
	p.mu.Lock()
	p.busy--
	u, g := p.users[who.user], p.groups[who.group.key]
	u.running--
	g.running--
	p.forget(who, u, g)
	p.dispatch()
	p.mu.Unlock()
	p.running.Done()
}

// dispatch grants free workers to waiters in arrival order, skipping those whose
// user or group holds its share. Called with p.mu held.
func (p *Pool) dispatch() {
	for i := 0; i < len(p.waiting) && p.busy < p.workers && !p.closed; {
		w := p.waiting[i]
		who := party{w.user, w.group}
		u, g := p.users[w.user], p.groups[w.group.key]
		if !p.mayRun(who, u, g) {
			i++
			continue
		}
		p.waiting = slices.Delete(p.waiting, i, i+1)
		u.queued--
		g.queued--
		p.grant(u, g)
		w.granted = true
		close(w.ready)
	}
}

// mayRun reports whether who may take one more worker. Called with p.mu held.
func (p *Pool) mayRun(who party, u, g *usage) bool {
	return (who.user == "" || u.running < p.userWorkers) &&
		(who.group.key == "" || g.running < p.groupWorkers(who.group))
}

// groupWorkers and groupQueue are g's caps (see WithGroup).
func (p *Pool) groupWorkers(g group) int {
	if g.workers > 0 {
		return g.workers
	}
	return max(p.workers/2, 1)
}

func (p *Pool) groupQueue(g group) int {
	if g.queue > 0 {
		return g.queue
	}
	return max(p.queue/4, 1)
}

// grant counts a worker as taken by a user and group. Called with p.mu held.
func (p *Pool) grant(u, g *usage) {
	p.busy++
	u.running++
	g.running++
	p.running.Add(1)
}

// usage returns key's usage in m, creating it. Called with p.mu held.
func (p *Pool) usage(m map[string]*usage, key string) *usage {
	u := m[key]
	if u == nil {
		u = &usage{}
		m[key] = u
	}
	return u
}

// forget drops the usages of a user and a group that hold nothing. Called with p.mu
// held.
func (p *Pool) forget(who party, u, g *usage) {
	if u.running == 0 && u.queued == 0 {
		delete(p.users, who.user)
	}
	if g.running == 0 && g.queued == 0 {
		delete(p.groups, who.group.key)
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
