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
