package remote

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/imaging"
	"github.com/coffer/coffer/imaging/remote/imagerpc"
)

// worker is one running child process, or one connection to a coffer-imager
// listening on the network, and the requests in flight on it.
type worker struct {
	peer      peer
	fw        *frameWriter
	log       *slog.Logger
	limits    imaging.Config
	maxResult int
	killGrace time.Duration // see Config.KillGrace

	mu       sync.Mutex
	calls    map[uint64]*call
	nextID   uint64
	pings    bool          // the worker answers Ping (Hello.ping)
	pongs    chan uint64   // ids of the Pongs received, for ping
	lastPing uint64        // id of the latest Ping sent
	broken   bool          // the child's stdout (the connection) ended: no new requests
	err      error         // why it ended (with the exit status)
	exited   chan struct{} // closed once the child is reaped and every call failed
}

// peer is the other end of a worker: a child process over pipes (child) or a
// connection to a listening coffer-imager (conn.go).
type peer interface {
	// closeWrite says no more requests: the peer finishes those it has, answers
	// them and ends its stream (the child exits; the listener closes its side).
	closeWrite()
	// kill ends the peer at once: it kills the child or closes the connection.
	kill()
	// wait, once the peer's stream ended, reaps the child or closes the connection
	// and returns why it ended (nil for a clean exit).
	wait() error
	// String names the peer in logs: "pid 123" or the worker's address.
	String() string
}

// child is a coffer-imager child process, talked to over its stdin and stdout.
type child struct {
	cmd           *exec.Cmd
	stdin, stdout io.Closer
}

func (c *child) closeWrite()    { c.stdin.Close() }
func (c *child) kill()          { c.cmd.Process.Kill() }
func (c *child) String() string { return "pid " + strconv.Itoa(c.cmd.Process.Pid) }

// wait reaps the child and closes the pipes.
func (c *child) wait() error {
	c.stdin.Close()
	err := c.cmd.Wait()
	c.stdout.Close()
	return err
}

// call is one request waiting for its result. A call stays registered until the
// child answers it or dies, even when the parent stops waiting (abandoned: its
// context ended), because the child may still be working on it: a crash then is
// counted among the transformations in flight (CrashError.InFlight), so that a
// transformation started beside it is not taken for the only suspect.
type call struct {
	done      chan struct{}
	data      []byte
	resp      *imagerpc.Response
	err       error
	abandoned bool // the parent no longer waits; the child may still be running it
	gone      bool // its request never reached the child: not in flight there
}

// startWorker runs the child and waits for its Hello, killing it if it does not
// say Hello within cfg.StartTimeout.
func startWorker(cfg Config, log *slog.Logger) (*worker, *imagerpc.Hello, error) {
	cmd := exec.Command(cfg.Path, slices.Concat(cfg.Args, WorkerArgs(cfg.Imaging))...)
	cmd.Env = append(append(os.Environ(), "MALLOC_ARENA_MAX=2"), cfg.Env...)
	cmd.Stderr = cfg.stderr()
	p, err := newPipes(cmd)
	if err != nil {
		return nil, nil, err
	}
	err = cmd.Start()
	p.started(err == nil)
	if err != nil {
		return nil, nil, err
	}
	w := newWorker(&child{cmd: cmd, stdin: p.stdin, stdout: p.stdout}, p.stdin, cfg, log)
	fr := &frameReader{r: p.stdout}
	hello, err := w.awaitHello(fr, cfg.StartTimeout)
	if err != nil {
		w.peer.kill()
		return nil, nil, fmt.Errorf("%s: %w (%v)", cfg.Path, err, w.peer.wait())
	}
	go w.readLoop(fr)
	return w, hello, nil
}

// newWorker returns a worker on p that writes its frames to out, with cfg's limits.
func newWorker(p peer, out io.Writer, cfg Config, log *slog.Logger) *worker {
	return &worker{
		peer: p, fw: &frameWriter{w: out}, log: log, calls: make(map[uint64]*call), pongs: make(chan uint64, 1),
		exited: make(chan struct{}), limits: cfg.Imaging, maxResult: int(5*cfg.Imaging.MaxOutputPixels + 1<<20), killGrace: cfg.KillGrace,
	}
}

// WorkerArgs returns the command-line flags that pass c's limits to coffer-imager.
func WorkerArgs(c imaging.Config) []string {
	return []string{
		"--workers", strconv.Itoa(c.Workers),
		"--max-bytes", strconv.FormatInt(c.MaxSourceBytes, 10),
		"--max-pixels", strconv.FormatInt(c.MaxSourcePixels, 10),
		"--max-output-pixels", strconv.FormatInt(c.MaxOutputPixels, 10),
		"--max-frames", strconv.Itoa(c.MaxFrames),
		"--max-cost", strconv.FormatInt(c.MaxCost, 10),
		"--timeout", c.Timeout.String(),
	}
}

// awaitHello reads the first frame, which must be a Hello of our protocol.
func (w *worker) awaitHello(fr *frameReader, timeout time.Duration) (*imagerpc.Hello, error) {
	f := &imagerpc.Frame{}
	errc := make(chan error, 1)
	go func() { errc <- fr.ReadFrame(f) }()
	select {
	case err := <-errc:
		if err != nil {
			return nil, fmt.Errorf("no hello from the image worker: %w", err)
		}
	case <-time.After(timeout):
		w.peer.kill()
		<-errc
		return nil, fmt.Errorf("image worker did not say hello within %v", timeout)
	}
	h := f.GetHello()
	if h == nil || h.GetProtocol() != protocol {
		return nil, fmt.Errorf("image worker speaks another protocol (want %d)", protocol)
	}
	return h, nil
}

// readLoop hands result chunks and responses to their calls until the child's
// stdout ends, then reaps the child and fails the calls still waiting.
func (w *worker) readLoop(fr *frameReader) {
	f := &imagerpc.Frame{}
	var err error
	for err == nil {
		if err = fr.ReadFrame(f); err == nil {
			err = w.dispatch(f)
		}
	}
	w.mu.Lock()
	w.broken = true
	w.mu.Unlock()
	if !errors.Is(err, io.EOF) { // a protocol error: the child is alive but useless
		w.log.Error("image worker broke the protocol; killing it", "worker", w.peer.String(), "err", err)
		w.peer.kill()
	}
	w.fail(fmt.Errorf("%w: %s", errWorkerDied, exitString(w.peer.wait())))
}

func exitString(err error) string {
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}

// dispatch gives one frame to its call; frames of calls no longer waiting are dropped.
func (w *worker) dispatch(f *imagerpc.Frame) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	c := w.calls[f.Id]
	switch b := f.Body.(type) {
	case *imagerpc.Frame_Chunk:
		if c != nil && c.err == nil && !c.abandoned {
			if len(c.data)+len(b.Chunk.GetData()) > w.maxResult {
				c.err = coffer.Errorf(coffer.EINTERNAL, "image worker sent a result larger than %d bytes", w.maxResult)
			}
			c.data = append(c.data, b.Chunk.GetData()...)
		}
	case *imagerpc.Frame_Pong:
		select {
		case w.pongs <- f.Id:
		default: // a late answer to a ping that timed out
		}
	case *imagerpc.Frame_Response:
		if c != nil {
			c.resp = b.Response
			delete(w.calls, f.Id)
			close(c.done)
		}
	default:
		return errors.New("imagerpc: unexpected frame from the worker")
	}
	return nil
}

// fail records why the child ended and fails every call still waiting.
func (w *worker) fail(err error) {
	w.mu.Lock()
	w.err = err
	calls := w.calls
	w.calls = nil
	inFlight := 0 // calls whose request reached the child (markGone writes under w.mu)
	for _, c := range calls {
		if !c.gone {
			inFlight++
		}
	}
	w.mu.Unlock()
	if inFlight > 0 {
		w.log.Error("image worker exited with transformations in flight; it restarts with the next one",
			"err", err, "in_flight", inFlight)
	} else {
		w.log.Debug("image worker exited", "err", err)
	}
	for _, c := range calls {
		c.err = died(&imaging.CrashError{InFlight: inFlight, Err: err})
		close(c.done)
	}
	close(w.exited)
}

// died is the error of a request whose worker exited under it.
func died(cause error) error {
	return &coffer.Error{Code: coffer.EUNAVAILABLE, Message: "the image worker exited during the transformation; retry later", Err: cause}
}

// exitErr is why the child ended, once it has been reaped; errWorkerDied until then.
func (w *worker) exitErr() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	return errWorkerDied
}

// dead reports whether the child can take no more requests.
func (w *worker) dead() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.broken
}

// stop closes the child's stdin, which makes it finish and exit, and kills it if it
// has not exited within timeout. It returns once the child is reaped.
func (w *worker) stop(timeout time.Duration) {
	w.peer.closeWrite()
	select {
	case <-w.exited:
	case <-time.After(timeout):
		w.log.Warn("image worker did not exit; killing it", "worker", w.peer.String())
		w.peer.kill()
		<-w.exited
	}
}
