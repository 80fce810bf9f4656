package remote

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/imaging"
	"github.com/coffer/coffer/imaging/remote/imagerpc"
)

// errCancelled ends the source of a request the server cancelled.
var errCancelled = errors.New("imagerpc: request cancelled by the server")

// Serve is the worker's side of the protocol (cmd/coffer-imager): it says Hello,
// then reads requests from in and runs each on its own goroutine through e (whose
// pool bounds how many transform at once), writing results to out. Sources are
// held in memory up to maxSource+1 bytes each. Serve returns when in ends (the server
// closed the pipe or exited), after the requests still running have answered, or
// at the first malformed frame or failed write.
func Serve(in io.Reader, out io.Writer, e imaging.Engine, maxSource int64, log *slog.Logger) error {
	return serve(in, out, e, maxSource, nil, log)
}

// serve is Serve with admit, the places for requests this worker holds at once
// across all its connections (nil: unbounded): a request that finds none, or comes
// while the worker drains, is answered with errWorkerBusy at once, before its
// source is held.
func serve(in io.Reader, out io.Writer, e imaging.Engine, maxSource int64, admit *admission, log *slog.Logger) error {
	s := &server{
		engine: e, limit: maxSource + 1, log: log, admit: admit,
		w: &frameWriter{w: out}, reqs: make(map[uint64]*request),
	}
	if err := s.w.WriteFrame(s.hello()); err != nil {
		return err
	}
	err := s.loop(&frameReader{r: in})
	s.abortAll()
	s.running.Wait()
	if errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// server is the state of Serve.
type server struct {
	engine  imaging.Engine
	limit   int64
	log     *slog.Logger
	admit   *admission // see serve
	w       *frameWriter
	running sync.WaitGroup

	mu   sync.Mutex
	reqs map[uint64]*request
}

// request is one transform running in the worker.
type request struct {
	src    *source
	cancel context.CancelFunc
}

// hello lists the output formats e writes.
func (s *server) hello() *imagerpc.Frame {
	h := &imagerpc.Hello{Protocol: protocol, Ping: true}
	for _, f := range []imaging.Format{imaging.JPEG, imaging.PNG, imaging.WebP, imaging.AVIF} {
		if s.engine.Supports(f) {
			h.Formats = append(h.Formats, string(f))
		}
	}
	return &imagerpc.Frame{Body: &imagerpc.Frame_Hello{Hello: h}}
}

// loop dispatches frames until in ends or breaks.
func (s *server) loop(fr *frameReader) error {
	f := &imagerpc.Frame{}
	for {
		if err := fr.ReadFrame(f); err != nil {
			return err
		}
		switch b := f.Body.(type) {
		case *imagerpc.Frame_Request:
			s.start(f.Id, b.Request)
		case *imagerpc.Frame_Chunk:
			if r := s.lookup(f.Id); r != nil {
				r.src.push(b.Chunk.GetData(), b.Chunk.GetLast())
			}
		case *imagerpc.Frame_Ping:
			if err := s.w.WriteFrame(&imagerpc.Frame{Id: f.Id, Body: &imagerpc.Frame_Pong{Pong: &imagerpc.Pong{}}}); err != nil {
				return err
			}
		case *imagerpc.Frame_Cancel:
			if r := s.lookup(f.Id); r != nil {
				r.cancel()
				r.src.abort(errCancelled)
			}
		default:
			return errors.New("imagerpc: unexpected frame from the server")
		}
	}
}

func (s *server) lookup(id uint64) *request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reqs[id]
}

// errWorkerBusy answers a request beyond the worker's MaxRequests.
var errWorkerBusy = &coffer.Error{Code: coffer.EUNAVAILABLE, Message: "the image worker is busy; retry later"}

// start registers request id and runs it; a duplicate id is answered with an error,
// a request beyond admit's places with errWorkerBusy (its chunks are then dropped:
// their id is unknown).
func (s *server) start(id uint64, req *imagerpc.Request) {
	if s.admit != nil && !s.admit.enter() {
		s.refuse(id, errWorkerBusy)
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &request{src: newSource(s.limit, req.GetSizeHint()), cancel: cancel}
	s.mu.Lock()
	_, dup := s.reqs[id]
	if !dup {
		s.reqs[id] = r
	}
	s.mu.Unlock()
	if dup {
		cancel()
		s.release()
		s.log.Error("duplicate request id", "id", id)
		return
	}
	transform := req.GetTransform()
	s.running.Add(1)
	go func() {
		defer s.running.Done()
		defer s.finish(id)
		s.run(ctx, id, r, transform)
	}()
}

func (s *server) finish(id uint64) {
	s.mu.Lock()
	r := s.reqs[id]
	delete(s.reqs, id)
	s.mu.Unlock()
	r.cancel()
	s.release()
}

// release frees the admission place of a request that ends.
func (s *server) release() {
	if s.admit != nil {
		s.admit.leave()
	}
}

// refuse answers request id with err without running it.
func (s *server) refuse(id uint64, err error) {
	s.log.Warn("request refused", "id", id, "err", err)
	if werr := s.w.WriteFrame(&imagerpc.Frame{Id: id, Body: &imagerpc.Frame_Response{Response: &imagerpc.Response{Error: errorToProto(err)}}}); werr != nil {
		s.log.Error("writing to the server failed", "id", id, "err", werr)
	}
}

// run transforms one source as transform (Request.transform) says and writes the
// answer. The transform is parsed strictly: a string not in the canonical form
// imaging.Options.Canonical writes is answered with EINVALID and never reaches the
// engine, so a peer cannot slip in options the server would not have sent.
func (s *server) run(ctx context.Context, id uint64, r *request, transform string) {
	o, err := imaging.ParseCanonical(transform)
	var res *imaging.Result
	if err == nil {
		res, err = s.engine.Transform(ctx, r.src, o)
	}
	r.src.abort(errCancelled) // the engine read what it needed; drop the rest
	if err == nil {
		err = s.sendResult(id, res)
	}
	if err != nil {
		if ctx.Err() == nil {
			s.log.Debug("transform failed", "id", id, "err", err)
		}
		err = s.w.WriteFrame(&imagerpc.Frame{Id: id, Body: &imagerpc.Frame_Response{Response: &imagerpc.Response{Error: errorToProto(err)}}})
	}
	if err != nil {
		s.log.Error("writing to the server failed", "id", id, "err", err)
	}
}

// sendResult writes the result's bytes in chunks, then its description.
func (s *server) sendResult(id uint64, res *imaging.Result) error {
	for data := res.Data; len(data) > 0; {
		n := min(len(data), ChunkSize)
		if err := s.w.WriteFrame(&imagerpc.Frame{Id: id, Body: &imagerpc.Frame_Chunk{Chunk: &imagerpc.Chunk{Data: data[:n]}}}); err != nil {
			return err
		}
		data = data[n:]
	}
	resp := &imagerpc.Response{Format: string(res.Format), Width: int32(res.Width), Height: int32(res.Height), Steps: stepsToProto(res.Steps)}
	return s.w.WriteFrame(&imagerpc.Frame{Id: id, Body: &imagerpc.Frame_Response{Response: resp}})
}

// admission bounds the requests a listening worker holds, over all connections.
type admission struct {
	places   chan struct{} // one token per request held
	draining atomic.Bool   // set on shutdown: no new requests
}

func newAdmission(n int) *admission { return &admission{places: make(chan struct{}, n)} }

// enter takes a place, unless none is free or the worker drains.
func (a *admission) enter() bool {
	if a.draining.Load() {
		return false
	}
	select {
	case a.places <- struct{}{}:
		return true
	default:
		return false
	}
}

func (a *admission) leave()    { <-a.places }
func (a *admission) held() int { return len(a.places) }

// abortAll ends the sources of every running request: the server is gone.
func (s *server) abortAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.reqs {
		r.cancel()
		r.src.abort(errCancelled)
	}
}
