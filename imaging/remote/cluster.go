package remote

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/imaging"
	"github.com/coffer/coffer/imaging/remote/imagerpc"
)

// ClusterConfig says which listening coffer-imager workers a Cluster sends
// transformations to and how.
type ClusterConfig struct {
	// Worker holds the limits and the pool: Imaging.Workers transformations at once
	// over all the workers (set it to the sum of their --workers), Imaging.Queue
	// waiting beyond them, then ErrBusy. StartTimeout bounds a connection attempt
	// (dial, handshake and Hello), KillGrace a cancelled request's answer (then the
	// connection is closed and made again), RestartBackoff and MaxRestartBackoff the
	// waits between connection attempts to a worker that keeps failing. Path, Args,
	// Env, Stderr and IdleTimeout are not used.
	Worker Config
	Addrs  []Addr      // the workers (ParseAddrs)
	Secret []byte      // the shared secret the workers hold (may be empty for --insecure workers)
	TLS    *tls.Config // for workers whose Addr.TLS is set: roots, client certificate
	// PingInterval is how often a connected worker that answers pings (Hello.ping) is
	// pinged; one that does not answer within PingTimeout has its connection closed
	// and made again. 0 = no pings (a broken connection is still seen at once).
	PingInterval, PingTimeout time.Duration
	Log                       *slog.Logger
}

// Validate returns EINVALID if a field is out of range.
func (c ClusterConfig) Validate() error {
	if len(c.Addrs) == 0 {
		return coffer.Errorf(coffer.EINVALID, "no image worker addresses")
	}
	if err := c.Worker.Imaging.Validate(); err != nil {
		return err
	}
	w := c.Worker
	if w.StartTimeout <= 0 || w.KillGrace <= 0 || w.RestartBackoff <= 0 || w.MaxRestartBackoff < w.RestartBackoff {
		return coffer.Errorf(coffer.EINVALID, "image workers: StartTimeout, KillGrace and RestartBackoff must be positive, MaxRestartBackoff at least RestartBackoff")
	}
	return nil
}

// Cluster implements imaging.Engine over coffer-imager workers listening on the
// network. It keeps one connection to each, made again after it breaks (at once,
// then after a backoff doubling while attempts fail), and sends each transformation
// to the connected worker with the fewest in flight. Its pool gives the same
// queue, ErrBusy and per-user caps as Engine's; when no worker is connected,
// transformations get EUNAVAILABLE with Retry-After, and those in flight on a
// worker whose connection breaks get EUNAVAILABLE.
type Cluster struct {
	cfg     ClusterConfig
	log     *slog.Logger
	pool    *imaging.Pool
	formats map[imaging.Format]bool // what every worker that answered at start writes
	workers []*member
	next    int // round-robin start among equally loaded workers; guarded by pickMu
	pickMu  sync.Mutex
	ctx     context.Context // ends with Close: connection attempts stop
	cancel  context.CancelFunc
	loops   sync.WaitGroup
}

var _ imaging.Engine = (*Cluster)(nil)

// NewCluster connects to every worker at once and returns once all have answered
// or StartTimeout passed; it fails if none answered (transformations could not run
// and the formats the workers write are unknown). Workers that did not answer are
// tried again in the background.
func NewCluster(cfg ClusterConfig) (*Cluster, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	ic := cfg.Worker.Imaging
	c := &Cluster{cfg: cfg, log: cfg.Log, pool: imaging.NewFairPool(ic.Workers, ic.Queue, ic.PerUserWorkers(), ic.UserQueue)}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	if c.log == nil {
		c.log = slog.Default()
	}
	hellos := make([]*imagerpc.Hello, len(cfg.Addrs))
	var wg sync.WaitGroup
	for i, a := range cfg.Addrs {
		m := &member{addr: a}
		c.workers = append(c.workers, m)
		wg.Add(1)
		go func() { defer wg.Done(); hellos[i] = c.connect(m) }()
	}
	wg.Wait()
	c.formats = commonFormats(hellos)
	if c.formats == nil {
		c.cancel()
		var errs []error
		for _, m := range c.workers {
			errs = append(errs, fmt.Errorf("%s: %w", m.addr, m.lastErrOr()))
		}
		return nil, fmt.Errorf("no image worker answered within %v: %w", cfg.Worker.StartTimeout, errors.Join(errs...))
	}
	for _, m := range c.workers {
		c.loops.Add(1)
		go c.watch(m)
	}
	return c, nil
}

// commonFormats returns the formats every worker that said Hello writes, nil if
// none did.
func commonFormats(hellos []*imagerpc.Hello) map[imaging.Format]bool {
	var out map[imaging.Format]bool
	for _, h := range hellos {
		if h == nil {
			continue
		}
		these := make(map[imaging.Format]bool)
		for _, f := range h.GetFormats() {
			if out == nil || out[imaging.Format(f)] {
				these[imaging.Format(f)] = true
			}
		}
		out = these
	}
	return out
}

// Transform implements imaging.Engine: it waits for a pool worker (capped per user,
// imaging.WithUser), then streams src to the least loaded connected worker and
// waits for the result, at most Imaging.Timeout plus KillGrace. A request that did
// not reach its worker (the connection broke just before) goes to another one.
func (c *Cluster) Transform(ctx context.Context, src io.Reader, o imaging.Options) (*imaging.Result, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if err := c.cfg.Worker.Imaging.CheckSize(imaging.SizeOf(src)); err != nil {
		return nil, err
	}
	var res *imaging.Result
	err := c.pool.Do(ctx, func(ctx context.Context) error {
		for tries := 1; ; tries++ {
			m, w, err := c.pick()
			if err != nil {
				return err
			}
			res, err = c.send(ctx, m, w, src, o)
			if !errors.Is(err, errNotSent) || tries >= len(c.workers) {
				return err
			}
		}
	})
	return res, err
}

// send runs one transformation on worker w of m, which pick counted.
func (c *Cluster) send(ctx context.Context, m *member, w *worker, src io.Reader, o imaging.Options) (*imaging.Result, error) {
	defer m.release()
	limit := c.cfg.Worker.Imaging.Timeout + c.cfg.Worker.KillGrace
	wctx, cancel := context.WithTimeoutCause(ctx, limit, errNoAnswer)
	defer cancel()
	res, answered, err := w.transform(wctx, src, o.Normalize())
	m.done(answered)
	return res, c.remoteErr(ctx, wctx, err, limit)
}

// remoteErr turns a worker's answer into the error Transform returns: a worker that
// did not answer in time is EUNAVAILABLE, and so is a busy worker, with Retry-After.
func (c *Cluster) remoteErr(ctx, wctx context.Context, err error, limit time.Duration) error {
	if err == nil {
		return nil
	}
	if ctx.Err() == nil && errors.Is(context.Cause(wctx), errNoAnswer) {
		return &coffer.Error{Code: coffer.EUNAVAILABLE, Err: errNoAnswer,
			Message: fmt.Sprintf("the image worker did not answer within %v; retry later", limit)}
	}
	var ce *coffer.Error
	if errors.As(err, &ce) && ce.Code == coffer.EUNAVAILABLE {
		return &imaging.RetryLater{Err: ce, After: time.Second}
	}
	return err
}

// pick returns the connected worker with the fewest transformations in flight
// (ties go round-robin) and counts one more on it; the caller calls release.
func (c *Cluster) pick() (*member, *worker, error) {
	c.pickMu.Lock()
	defer c.pickMu.Unlock()
	var best *member
	var bestW *worker
	bestLoad := 0
	for i := range c.workers {
		m := c.workers[(c.next+i)%len(c.workers)]
		w, load := m.state()
		if w != nil && !w.dead() && (best == nil || load < bestLoad) {
			best, bestW, bestLoad = m, w, load
		}
	}
	if best == nil {
		return nil, nil, c.unavailable()
	}
	c.next = (c.next + 1) % len(c.workers)
	best.acquire()
	return best, bestW, nil
}

// unavailable is the error when no worker is connected: EUNAVAILABLE with a
// Retry-After of the next connection attempt (at least a second).
func (c *Cluster) unavailable() error {
	after := time.Duration(0)
	var last error
	for _, m := range c.workers {
		m.mu.Lock()
		if d := time.Until(m.notBefore); after == 0 || d < after {
			after = d
		}
		if m.lastErr != nil {
			last = m.lastErr
		}
		m.mu.Unlock()
	}
	return &imaging.RetryLater{After: max(after, time.Second), Err: &coffer.Error{Code: coffer.EUNAVAILABLE, Err: last,
		Message: "no image worker is reachable; retry later"}}
}

// Supports reports whether the workers write format f.
func (c *Cluster) Supports(f imaging.Format) bool { return c.formats[f] }

// Pool returns the pool, for its Busy and Queued gauges.
func (c *Cluster) Pool() *imaging.Pool { return c.pool }

// Close waits for running transformations, refuses new ones with imaging.ErrClosed,
// stops reconnecting and closes the connections (each worker finishes what it has).
func (c *Cluster) Close() error {
	c.pool.Close()
	c.cancel()
	c.loops.Wait()
	return nil
}
