package remote

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/imaging"
)

// Config says how to run the worker. Imaging holds the limits and the pool size; the
// worker gets the limits on its command line and runs Imaging.Workers transforms at once.
type Config struct {
	Imaging      imaging.Config
	Path         string        // the coffer-imager binary
	Args         []string      // extra arguments before the limits (tests)
	Env          []string      // extra environment (tests); MALLOC_ARENA_MAX=2 is always set
	Stderr       io.Writer     // the worker's logs; nil = os.Stderr
	StartTimeout time.Duration // how long a starting worker may take to say Hello
	IdleTimeout  time.Duration // stop the worker after this long without transforms; 0 = never
	// A worker that fails to start or dies is restarted by the next transform at once
	// the first time; after that, restarts wait RestartBackoff, doubling up to
	// MaxRestartBackoff, until a transform gets an answer from a worker again.
	// Meanwhile transforms get EUNAVAILABLE (503) with Retry-After.
	RestartBackoff    time.Duration
	MaxRestartBackoff time.Duration
	// KillGrace is how long the child has to answer a request the server cancelled
	// (its client left, or Imaging.Timeout plus KillGrace passed without an answer)
	// before the server kills it: libvips stops a killed computation within
	// milliseconds, so a child that does not answer is stuck (in a decoder that
	// ignores the kill flag) and would hold its worker for good. Requests in flight
	// on it then fail with EUNAVAILABLE and the next transformation starts a new child.
	KillGrace time.Duration
	Log       *slog.Logger // nil = slog.Default()
}

// DefaultConfig returns imaging.DefaultConfig, the binary at path, a 10 s start
// timeout, a 5 min idle timeout, restart backoff from 1 s up to 1 min and a kill
// grace of 5 s.
func DefaultConfig(path string) Config {
	return Config{Imaging: imaging.DefaultConfig(), Path: path, StartTimeout: 10 * time.Second, IdleTimeout: 5 * time.Minute,
		RestartBackoff: time.Second, MaxRestartBackoff: time.Minute, KillGrace: 5 * time.Second}
}

// Validate returns EINVALID if a field is out of range.
func (c Config) Validate() error {
	if err := c.Imaging.Validate(); err != nil {
		return err
	}
	if c.Path == "" {
		return coffer.Errorf(coffer.EINVALID, "image worker path is empty")
	}
	if c.StartTimeout <= 0 {
		return coffer.Errorf(coffer.EINVALID, "image worker start timeout must be positive")
	}
	if c.IdleTimeout < 0 {
		return coffer.Errorf(coffer.EINVALID, "image worker idle timeout must not be negative")
	}
	if c.KillGrace <= 0 {
		return coffer.Errorf(coffer.EINVALID, "image worker kill grace must be positive")
	}
	if c.RestartBackoff < 0 || c.MaxRestartBackoff < c.RestartBackoff {
		return coffer.Errorf(coffer.EINVALID, "image worker restart backoff must be 0 <= RestartBackoff <= MaxRestartBackoff")
	}
	return nil
}

// Engine implements imaging.Engine by sending transforms to a coffer-imager child
// process. The child starts with the first transform and again after it died or was
// stopped for being idle (IdleTimeout); Close stops it.
type Engine struct {
	cfg     Config
	log     *slog.Logger
	pool    *imaging.Pool
	formats map[imaging.Format]bool // what the worker writes (from the probe's Hello)

	mu     sync.Mutex // guards the fields below; held while a worker starts
	w      *worker
	users  int         // transforms between worker() and release()
	idle   *time.Timer // stops w after IdleTimeout without users
	closed bool
	// stopping counts idle workers being stopped, which Close waits for.
	stopping sync.WaitGroup
	starts   atomic.Int64 // workers started (the probe excluded)
	// failures counts failed starts and deaths since a worker last answered; no
	// worker starts before notBefore. lastErr is the latest failure.
	failures  int
	notBefore time.Time
	lastErr   error
}

var _ imaging.Engine = (*Engine)(nil)

// New checks that the worker runs, by starting it once and stopping it after its
// Hello (which says the formats it writes), and returns an engine with no worker
// running. It fails if the binary is missing or does not start.
func New(cfg Config) (*Engine, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	ic := cfg.Imaging
	e := &Engine{cfg: cfg, log: cfg.Log, pool: imaging.NewFairPool(ic.Workers, ic.Queue, ic.PerUserWorkers(), ic.UserQueue)}
	if e.log == nil {
		e.log = slog.Default()
	}
	w, hello, err := startWorker(cfg, e.log)
	if err != nil {
		return nil, err
	}
	w.stop(cfg.StartTimeout)
	e.formats = make(map[imaging.Format]bool)
	for _, f := range hello.GetFormats() {
		e.formats[imaging.Format(f)] = true
	}
	return e, nil
}

// Transform implements imaging.Engine: it waits for a pool worker (capped per user,
// imaging.WithUser), then streams src to the child process and waits for the
// result, at most Imaging.Timeout plus KillGrace (the child enforces the timeout
// itself; this bounds a child that does not).
func (e *Engine) Transform(ctx context.Context, src io.Reader, o imaging.Options) (*imaging.Result, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if err := e.cfg.Imaging.CheckSize(imaging.SizeOf(src)); err != nil {
		return nil, err
	}
	var res *imaging.Result
	err := e.pool.Do(ctx, func(ctx context.Context) error {
		w, err := e.worker()
		if err != nil {
			return err
		}
		defer e.release()
		wctx, cancel := context.WithTimeoutCause(ctx, e.cfg.Imaging.Timeout+e.cfg.KillGrace, errNoAnswer)
		defer cancel()
		var answered bool
		res, answered, err = w.transform(wctx, src, o.Normalize())
		if answered {
			e.answered() // the worker works, even if this image did not
		}
		if err != nil && ctx.Err() == nil && errors.Is(context.Cause(wctx), errNoAnswer) {
			err = &coffer.Error{Code: coffer.EUNAVAILABLE, Err: errNoAnswer,
				Message: fmt.Sprintf("the image worker did not answer within %v; retry later", e.cfg.Imaging.Timeout+e.cfg.KillGrace)}
		}
		return err
	})
	return res, err
}

// errNoAnswer is the cause of a transformation the child did not answer in time.
var errNoAnswer = errors.New("image worker did not answer in time")

// worker returns the running child, starting one if there is none or it died. On
// success the caller must call release when done with it.
func (e *Engine) worker() (*worker, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, imaging.ErrClosed
	}
	if e.w != nil {
		if !e.w.dead() {
			e.users++
			return e.w, nil
		}
		e.failed(e.w.exitErr()) // it died on its own: stopped workers are no longer e.w
		e.w = nil
	}
	if wait := time.Until(e.notBefore); wait > 0 {
		return nil, &imaging.RetryLater{After: wait, Err: &coffer.Error{Code: coffer.EUNAVAILABLE, Err: e.lastErr,
			Message: fmt.Sprintf("the image worker failed %d times in a row; it is tried again in %v", e.failures, wait.Round(100*time.Millisecond))}}
	}
	w, _, err := startWorker(e.cfg, e.log)
	if err != nil {
		e.failed(err)
		e.log.Error("image worker did not start", "path", e.cfg.Path, "err", err, "failures", e.failures)
		return nil, &imaging.RetryLater{After: max(time.Until(e.notBefore), time.Second),
			Err: &coffer.Error{Code: coffer.EUNAVAILABLE, Message: "the image worker did not start; retry later", Err: err}}
	}
	e.w = w
	e.users++
	e.starts.Add(1)
	e.log.Info("image worker started", "worker", w.peer.String(), "workers", e.cfg.Imaging.Workers)
	return w, nil
}

// failed records a failed start or a death and holds the next start back: not at all
// after the first failure, then RestartBackoff doubling up to MaxRestartBackoff.
// Called with e.mu held.
func (e *Engine) failed(err error) {
	e.failures++
	e.lastErr = err
	d := restartDelay(e.failures, e.cfg.RestartBackoff, e.cfg.MaxRestartBackoff)
	e.notBefore = time.Now().Add(d)
	if d > 0 {
		e.log.Warn("image worker keeps failing; holding its restart back", "failures", e.failures, "for", d.String(), "err", err)
	}
}

// restartDelay is the wait before a start after n consecutive failures.
func restartDelay(n int, base, limit time.Duration) time.Duration {
	if n <= 1 || base <= 0 {
		return 0
	}
	d := base
	for i := 2; i < n && d < limit; i++ {
		d *= 2
	}
	return min(d, limit)
}

// answered records that a worker answered a transform: failures start over.
func (e *Engine) answered() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.failures, e.notBefore, e.lastErr = 0, time.Time{}, nil
}

// release ends a use of the worker; the last one arms the idle timer.
func (e *Engine) release() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.users--; e.users > 0 || e.cfg.IdleTimeout == 0 || e.closed {
		return
	}
	if e.idle == nil {
		e.idle = time.AfterFunc(e.cfg.IdleTimeout, e.stopIdle)
	} else {
		e.idle.Reset(e.cfg.IdleTimeout)
	}
}

// stopIdle stops the worker if nothing used it since the idle timer was armed: its
// memory (libvips, its libraries, malloc arenas) goes back to the system until the
// next transform starts a new one.
func (e *Engine) stopIdle() {
	e.mu.Lock()
	w := e.w
	if e.users > 0 || w == nil || e.closed {
		e.mu.Unlock()
		return
	}
	e.w = nil
	e.stopping.Add(1)
	e.mu.Unlock()
	defer e.stopping.Done()
	e.log.Info("image worker idle; stopping it until the next transformation", "worker", w.peer.String(), "idle", e.cfg.IdleTimeout.String())
	w.stop(e.cfg.StartTimeout)
}

// Supports reports whether the worker writes format f.
func (e *Engine) Supports(f imaging.Format) bool { return e.formats[f] }

// Starts returns how many worker processes have started (the check in New
// excluded): 1 after the first transform, and one more each time a transform found
// the worker dead or stopped for being idle. A counter for metrics.
func (e *Engine) Starts() int64 { return e.starts.Load() }

// Pool returns the worker pool, for its Busy and Queued gauges.
func (e *Engine) Pool() *imaging.Pool { return e.pool }

// Close waits for running transforms, refuses new ones with imaging.ErrClosed and
// stops the child process (killing it if it does not exit within StartTimeout).
func (e *Engine) Close() error {
	e.pool.Close()
	e.mu.Lock()
	e.closed = true
	w := e.w
	e.w = nil
	if e.idle != nil {
		e.idle.Stop()
	}
	e.mu.Unlock()
	if w != nil {
		w.stop(e.cfg.StartTimeout)
	}
	e.stopping.Wait()
	return nil
}

// errWorkerDied is the cause of failures of requests in flight when the child exits.
var errWorkerDied = errors.New("image worker exited")

// stderr returns where the child's logs go.
func (c Config) stderr() io.Writer {
	if c.Stderr != nil {
		return c.Stderr
	}
	return os.Stderr
}
