package remote

import (
	"context"
	"errors"
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
	Log          *slog.Logger  // nil = slog.Default()
}

// DefaultConfig returns imaging.DefaultConfig, the binary at path, a 10 s start
// timeout and a 5 min idle timeout.
func DefaultConfig(path string) Config {
	return Config{Imaging: imaging.DefaultConfig(), Path: path, StartTimeout: 10 * time.Second, IdleTimeout: 5 * time.Minute}
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
}

var _ imaging.Engine = (*Engine)(nil)

// New checks that the worker runs, by starting it once and stopping it after its
// Hello (which says the formats it writes), and returns an engine with no worker
// running. It fails if the binary is missing or does not start.
func New(cfg Config) (*Engine, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	e := &Engine{cfg: cfg, log: cfg.Log, pool: imaging.NewPool(cfg.Imaging.Workers, cfg.Imaging.Queue)}
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

// Transform implements imaging.Engine: it waits for a pool worker, then streams src
// to the child process and waits for the result.
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
		res, err = w.transform(ctx, src, o.Normalize())
		return err
	})
	return res, err
}

// worker returns the running child, starting one if there is none or it died. On
// success the caller must call release when done with it.
func (e *Engine) worker() (*worker, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, imaging.ErrClosed
	}
	if e.w != nil && !e.w.dead() {
		e.users++
		return e.w, nil
	}
	w, _, err := startWorker(e.cfg, e.log)
	if err != nil {
		e.log.Error("image worker did not start", "path", e.cfg.Path, "err", err)
		return nil, coffer.Internal(err, "image worker did not start")
	}
	e.w = w
	e.users++
	e.starts.Add(1)
	e.log.Info("image worker started", "pid", w.cmd.Process.Pid, "workers", e.cfg.Imaging.Workers)
	return w, nil
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
	e.log.Info("image worker idle; stopping it until the next transformation", "pid", w.cmd.Process.Pid, "idle", e.cfg.IdleTimeout.String())
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
