package imaging

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/coffer/coffer"
)

// blocker is a function for Pool.Do that reports its start and waits for release.
type blocker struct {
	started chan struct{}
	release chan struct{}
}

func newBlocker() *blocker {
	return &blocker{started: make(chan struct{}, 100), release: make(chan struct{})}
}

func (b *blocker) run(context.Context) error {
	b.started <- struct{}{}
	<-b.release
	return nil
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestPoolBoundsWorkersAndQueue(t *testing.T) {
	p := NewPool(2, 1)
	b := newBlocker()
	var wg sync.WaitGroup
	errs := make(chan error, 3)
	for range 3 {
		wg.Add(1)
		go func() { defer wg.Done(); errs <- p.Do(context.Background(), b.run) }()
	}
	<-b.started
	<-b.started
	waitFor(t, "a queued caller", func() bool { return p.Queued() == 1 })
	if p.Busy() != 2 {
		t.Errorf("Busy = %d, want 2", p.Busy())
	}
	err := p.Do(context.Background(), b.run)
	if !errors.Is(err, ErrBusy) || coffer.ErrorCode(err) != coffer.EUNAVAILABLE {
		t.Errorf("Do beyond the queue = %v, want ErrBusy", err)
	}
	close(b.release)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("Do = %v", err)
		}
	}
	if p.Busy() != 0 || p.Queued() != 0 || p.Workers() != 2 || p.QueueLen() != 1 {
		t.Errorf("after: busy %d queued %d workers %d queue %d", p.Busy(), p.Queued(), p.Workers(), p.QueueLen())
	}
}

func TestPoolCancelledWhileQueued(t *testing.T) {
	p := NewPool(1, 5)
	b := newBlocker()
	go func() { _ = p.Do(context.Background(), b.run) }()
	<-b.started
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		done <- p.Do(ctx, func(context.Context) error { t.Error("cancelled caller ran"); return nil })
	}()
	waitFor(t, "a queued caller", func() bool { return p.Queued() == 1 })
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Do = %v, want context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("cancelled caller stayed in the queue")
	}
	if p.Queued() != 0 {
		t.Errorf("Queued = %d after cancel", p.Queued())
	}
	close(b.release)
}

func TestPoolReturnsErrorsAndRefusesEndedContexts(t *testing.T) {
	p := NewPool(1, 0)
	boom := errors.New("boom")
	if err := p.Do(context.Background(), func(context.Context) error { return boom }); err != boom {
		t.Errorf("Do = %v, want fn's error", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := p.Do(ctx, func(context.Context) error { t.Error("ran"); return nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("Do with ended ctx = %v", err)
	}
}

func TestPoolClose(t *testing.T) {
	p := NewPool(1, 1)
	b := newBlocker()
	running := make(chan error)
	go func() { running <- p.Do(context.Background(), b.run) }()
	<-b.started
	queued := make(chan error)
	go func() { queued <- p.Do(context.Background(), b.run) }()
	waitFor(t, "a queued caller", func() bool { return p.Queued() == 1 })
	closed := make(chan struct{})
	go func() { p.Close(); close(closed) }()
	if err := <-queued; !errors.Is(err, ErrClosed) {
		t.Errorf("queued Do = %v, want ErrClosed", err)
	}
	select {
	case <-closed:
		t.Fatal("Close returned while a function was running")
	case <-time.After(20 * time.Millisecond):
	}
	close(b.release)
	if err := <-running; err != nil {
		t.Errorf("running Do = %v", err)
	}
	<-closed
	if err := p.Do(context.Background(), b.run); !errors.Is(err, ErrClosed) {
		t.Errorf("Do after Close = %v, want ErrClosed", err)
	}
	p.Close()
}

// awaitStart waits up to 5 s for a function of b to start.
func awaitStart(t *testing.T, b *blocker, who string) {
	t.Helper()
	select {
	case <-b.started:
	case <-time.After(5 * time.Second):
		t.Fatalf("%s did not get a worker", who)
	}
}

// doAs runs b.run on p as user in the background and returns its error channel.
func doAs(p *Pool, user string, b *blocker) chan error {
	errc := make(chan error, 1)
	go func() { errc <- p.Do(WithUser(context.Background(), user), b.run) }()
	return errc
}

// One user holding its share of the workers waits for its own, and beyond its
// share of the queue is refused with ErrUserBusy (429); another user still gets a
// free worker at once.
func TestFairPoolCapsOneUser(t *testing.T) {
	p := NewFairPool(4, 10, 2, 1)
	a, b := newBlocker(), newBlocker()
	aErrs := []chan error{doAs(p, "user:a", a), doAs(p, "user:a", a)}
	waitFor(t, "A's two workers", func() bool { return p.Busy() == 2 })
	aErrs = append(aErrs, doAs(p, "user:a", a))
	waitFor(t, "A's third transform queued", func() bool { return p.Queued() == 1 })
	if err := p.Do(WithUser(context.Background(), "user:a"), a.run); !errors.Is(err, ErrUserBusy) || coffer.ErrorCode(err) != coffer.ETOOMANY {
		t.Fatalf("A's fourth: err = %v, want ErrUserBusy", err)
	}
	bErr := doAs(p, "user:b", b)
	awaitStart(t, b, "B") // B runs although A waits: A is at its cap, not the pool
	if p.Busy() != 3 || p.Queued() != 1 {
		t.Fatalf("busy %d queued %d, want 3 and 1", p.Busy(), p.Queued())
	}
	a.release <- struct{}{} // one of A's finishes: A's queued one takes its place
	waitFor(t, "A's queued transform to start", func() bool { return p.Queued() == 0 && p.Busy() == 3 })
	close(a.release)
	close(b.release)
	for _, c := range append(aErrs, bErr) {
		if err := <-c; err != nil {
			t.Error(err)
		}
	}
	if len(p.users) != 0 {
		t.Errorf("usage left behind: %v", p.users)
	}
}

// A freed worker goes to the first waiter whose user is below its cap, not to an
// earlier waiter of a user that holds its share.
func TestFairPoolSkipsCappedWaiters(t *testing.T) {
	p := NewFairPool(2, 10, 1, 5)
	a, b, c := newBlocker(), newBlocker(), newBlocker()
	errs := []chan error{doAs(p, "user:a", a)}
	<-a.started
	errs = append(errs, doAs(p, "user:b", b))
	<-b.started
	errs = append(errs, doAs(p, "user:a", a))
	waitFor(t, "A's second queued", func() bool { return p.Queued() == 1 })
	errs = append(errs, doAs(p, "user:c", c))
	waitFor(t, "C queued", func() bool { return p.Queued() == 2 })
	b.release <- struct{}{} // B's worker frees: A (first in line) is capped, C gets it
	awaitStart(t, c, "C")
	if p.Queued() != 1 {
		t.Fatalf("queued %d, want A's second only", p.Queued())
	}
	close(a.release)
	close(c.release)
	close(b.release)
	for _, ch := range errs {
		if err := <-ch; err != nil {
			t.Error(err)
		}
	}
}

// A queued user whose context ends leaves its share of the queue free again.
func TestFairPoolCancelFreesUserQueue(t *testing.T) {
	p := NewFairPool(1, 10, 1, 1)
	a := newBlocker()
	first := doAs(p, "user:a", a)
	<-a.started
	ctx, cancel := context.WithCancel(WithUser(context.Background(), "user:a"))
	errc := make(chan error, 1)
	go func() { errc <- p.Do(ctx, a.run) }()
	waitFor(t, "queued", func() bool { return p.Queued() == 1 })
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	second := doAs(p, "user:a", a) // the queue place is free again
	waitFor(t, "queued again", func() bool { return p.Queued() == 1 })
	close(a.release)
	for _, c := range []chan error{first, second} {
		if err := <-c; err != nil {
			t.Error(err)
		}
	}
}

// TestFairPoolCapsOneGroup: one tenant (a group) flooding with many users holds at
// most its share of the workers (half of them by default) and of the queue (a
// quarter); beyond that its users are refused with ErrUserBusy while another
// tenant's transform runs at once.
func TestFairPoolCapsOneGroup(t *testing.T) {
	p := NewFairPool(4, 8, 4, 8)
	a, b := newBlocker(), newBlocker()
	var errs []chan error
	asTenant := func(tenant, user string, bl *blocker) chan error {
		c := make(chan error, 1)
		ctx := WithGroup(WithUser(context.Background(), user), tenant, 0, 0)
		go func() { c <- p.Do(ctx, bl.run) }()
		return c
	}
	for i := range 4 { // distinct users: only the group cap holds them
		errs = append(errs, asTenant("tenant:a", "user:"+string(rune('a'+i)), a))
	}
	waitFor(t, "A's share running and queued", func() bool { return p.Busy() == 2 && p.Queued() == 2 })
	err := p.Do(WithGroup(WithUser(context.Background(), "user:z"), "tenant:a", 0, 0), a.run)
	if !errors.Is(err, ErrUserBusy) {
		t.Fatalf("A's fifth: err = %v, want ErrUserBusy (the tenant's queue share is 2)", err)
	}
	errs = append(errs, asTenant("tenant:b", "user:a", b))
	awaitStart(t, b, "tenant B") // a worker is free for B although A has work waiting
	close(a.release)
	close(b.release)
	for _, c := range errs {
		if err := <-c; err != nil {
			t.Error(err)
		}
	}
	if len(p.users) != 0 || len(p.groups) != 0 {
		t.Errorf("usage left behind: %v %v", p.users, p.groups)
	}
}
