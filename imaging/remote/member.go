package remote

import (
	"cmp"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/coffer/coffer/imaging/remote/imagerpc"
)

// member is one worker of a Cluster: its connection while it has one, and its load
// and failures.
type member struct {
	addr Addr

	mu         sync.Mutex
	w          *worker // nil while not connected
	inFlight   int
	transforms int64 // transformations it answered
	// failures counts failed connection attempts and broken connections since the
	// worker last answered; no attempt before notBefore. lastErr is the latest.
	failures      int
	failuresTotal int64 // every failure since start, for metrics
	notBefore     time.Time
	lastErr       error
}

// WorkerState describes one remote worker, for the management API and logs.
type WorkerState struct {
	Addr       string // host:port as configured
	Healthy    bool   // connected and taking transformations
	InFlight   int    // transformations sent to it and not answered yet
	Transforms int64  // transformations it answered (results and errors of its own)
	Failures   int    // failed connection attempts and broken connections since it last answered
	LastError  string // the latest of those failures, "" if none
	// FailuresTotal counts every failed attempt and broken connection since start.
	FailuresTotal int64
}

// Workers returns the state of every worker, in the configured order.
func (c *Cluster) Workers() []WorkerState {
	out := make([]WorkerState, 0, len(c.workers))
	for _, m := range c.workers {
		m.mu.Lock()
		s := WorkerState{Addr: m.addr.String(), Healthy: m.w != nil && !m.w.dead(), InFlight: m.inFlight,
			Transforms: m.transforms, Failures: m.failures, FailuresTotal: m.failuresTotal}
		if m.lastErr != nil {
			s.LastError = m.lastErr.Error()
		}
		m.mu.Unlock()
		out = append(out, s)
	}
	return out
}

// state returns the member's connection (nil if none) and load.
func (m *member) state() (*worker, int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.w, m.inFlight
}

func (m *member) acquire() { m.mu.Lock(); m.inFlight++; m.mu.Unlock() }
func (m *member) release() { m.mu.Lock(); m.inFlight--; m.mu.Unlock() }

// done records a transformation's end: one the worker answered resets its failures.
func (m *member) done(answered bool) {
	if !answered {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.transforms++
	m.failures, m.notBefore, m.lastErr = 0, time.Time{}, nil
}

// failed records a failed attempt or a broken connection and holds the next attempt
// back: not at all after the first failure, then RestartBackoff doubling up to
// MaxRestartBackoff. It returns the wait.
func (m *member) failed(err error, cfg Config) time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.w = nil
	m.failures++
	m.failuresTotal++
	m.lastErr = err
	d := restartDelay(m.failures, cfg.RestartBackoff, cfg.MaxRestartBackoff)
	m.notBefore = time.Now().Add(d)
	return d
}

// lastErrOr returns the latest failure, or a placeholder if there is none.
func (m *member) lastErrOr() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.lastErr == nil {
		return errors.New("no attempt finished")
	}
	return m.lastErr
}

// connect makes one connection attempt to m and returns the worker's Hello, nil
// if the attempt failed (recorded in m).
func (c *Cluster) connect(m *member) *imagerpc.Hello {
	w, hello, err := dialWorker(c.ctx, m.addr, c.cfg.Secret, c.cfg.TLS, c.cfg.Worker, c.log)
	if err != nil {
		d := m.failed(err, c.cfg.Worker)
		c.log.Warn("image worker unreachable", "worker", m.addr.String(), "err", err, "retry_in", d.String())
		return nil
	}
	m.mu.Lock()
	m.w = w
	m.mu.Unlock()
	c.log.Info("image worker connected", "worker", m.addr.String(), "formats", hello.GetFormats())
	return hello
}

// watch keeps m connected until Close: when its connection breaks (the worker
// died, the network failed, the worker broke the protocol) it records the failure
// and connects again after the backoff; on Close it closes the connection, letting
// the worker finish what it has.
func (c *Cluster) watch(m *member) {
	defer c.loops.Done()
	for {
		w, _ := m.state()
		if w == nil {
			select {
			case <-c.ctx.Done():
				return
			case <-time.After(time.Until(m.notBeforeTime())):
			}
			c.connect(m)
			continue
		}
		if !c.health(m, w) {
			return
		}
	}
}

// health watches m's connection w until it ends, pinging the worker if it answers
// pings; it records the failure and returns true, or false once the Cluster closed
// (having closed w).
func (c *Cluster) health(m *member, w *worker) bool {
	var tick <-chan time.Time
	if w.pings && c.cfg.PingInterval > 0 {
		t := time.NewTicker(c.cfg.PingInterval)
		defer t.Stop()
		tick = t.C
	}
	var pingErr error
	for {
		select {
		case <-c.ctx.Done():
			w.stop(c.cfg.Worker.StartTimeout)
			return false
		case <-tick:
			if err := w.ping(c.cfg.PingTimeout); errors.Is(err, errNoPong) {
				pingErr = fmt.Errorf("%w within %v", err, c.cfg.PingTimeout)
				c.log.Error("image worker does not answer; closing its connection", "worker", m.addr.String(), "err", pingErr)
				w.peer.kill()
			}
		case <-w.exited:
			err := cmp.Or(pingErr, w.exitErr())
			d := m.failed(err, c.cfg.Worker)
			c.log.Error("image worker connection lost", "worker", m.addr.String(), "err", err, "retry_in", d.String())
			return true
		}
	}
}

// notBeforeTime returns when the next attempt may start.
func (m *member) notBeforeTime() time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.notBefore
}
