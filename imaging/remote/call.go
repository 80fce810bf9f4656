package remote

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/imaging"
	"github.com/coffer/coffer/imaging/remote/imagerpc"
)

// chunkBufs holds ChunkSize buffers for streaming sources.
var chunkBufs = sync.Pool{New: func() any { return new([ChunkSize]byte) }}

// errWrite marks a failed write to the child: its stdin is gone, so it exited or
// is exiting, and the call learns why from readLoop.
var errWrite = errors.New("imagerpc: writing to the image worker failed")

// errNotSent marks the failure of a request that never reached the worker (it was
// gone already): its source is unread, so another worker may take it.
var errNotSent = errors.New("the request did not reach the image worker")

// transform runs one request on the child: it sends the options (as their canonical
// string, so o must be valid: Engine.Transform validates it), streams src, then
// waits for the result. When ctx ends it tells the child to cancel and returns.
// answered reports whether the child sent a response (a result or an error of its
// own): a child that answers works, whatever it made of this image.
func (w *worker) transform(ctx context.Context, src io.Reader, o imaging.Options) (res *imaging.Result, answered bool, err error) {
	id, c, err := w.register()
	if err != nil {
		return nil, false, err
	}
	defer w.unregister(id)
	req := &imagerpc.Request{Transform: o.Canonical(), SizeHint: imaging.SizeOf(src)}
	gone := w.fw.WriteFrame(&imagerpc.Frame{Id: id, Body: &imagerpc.Frame_Request{Request: req}}) != nil
	if gone {
		w.markGone(c)
		err = errWrite // the child is gone: readLoop fails the call with the cause
	} else {
		err = w.stream(ctx, id, c, src)
	}
	if err != nil && !errors.Is(err, errWrite) {
		w.cancel(id)
		return nil, false, err
	}
	select {
	case <-c.done:
		res, err = c.result()
		if crash := (*imaging.CrashError)(nil); gone && errors.As(err, &crash) {
			err = died(fmt.Errorf("%w: %w", errNotSent, crash.Err)) // it died before it saw this image: not a crash of it
		}
		return res, c.resp != nil, err
	case <-ctx.Done():
		w.cancel(id)
		return nil, false, ctx.Err()
	}
}

// register adds a call with a new id, unless the child is gone.
func (w *worker) register() (uint64, *call, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.broken || w.calls == nil {
		return 0, nil, died(fmt.Errorf("%w: %w", errNotSent, cmp.Or(w.err, errWorkerDied))) // w.err is set once the child is reaped
	}
	w.nextID++
	c := &call{done: make(chan struct{})}
	w.calls[w.nextID] = c
	return w.nextID, c, nil
}

// unregister ends the parent's wait for call id. A call the child has not answered
// stays registered, abandoned, until it does (the child answers every request it
// got, cancelled or not) or dies.
func (w *worker) unregister(id uint64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	c := w.calls[id] // a nil map (child gone) is fine
	if c == nil {
		return
	}
	if c.gone {
		delete(w.calls, id)
		return
	}
	c.abandoned, c.data = true, nil
}

// markGone records that c's request could not be written: the child never saw it.
func (w *worker) markGone(c *call) {
	w.mu.Lock()
	defer w.mu.Unlock()
	c.gone = true
}

// cancel tells the child to stop working on id (best effort: it may be gone) and
// kills the child if it has not answered id within killGrace (see Config.KillGrace).
func (w *worker) cancel(id uint64) {
	_ = w.fw.WriteFrame(&imagerpc.Frame{Id: id, Body: &imagerpc.Frame_Cancel{Cancel: &imagerpc.Cancel{}}})
	time.AfterFunc(w.killGrace, func() { w.killIfPending(id) })
}

// killIfPending kills the child if request id is still unanswered: the child
// ignored its cancellation for killGrace.
func (w *worker) killIfPending(id uint64) {
	w.mu.Lock()
	_, pending := w.calls[id]
	w.mu.Unlock()
	if pending {
		w.log.Error("image worker did not stop a cancelled transformation; killing it", "worker", w.peer.String(), "grace", w.killGrace.String())
		w.peer.kill()
	}
}

// stream sends src in chunks, the last one flagged. It refuses a source beyond
// MaxSourceBytes (ETOOLARGE) as soon as it has read one byte too many, and stops
// early if the call ended (the child answered or died) or ctx ended.
func (w *worker) stream(ctx context.Context, id uint64, c *call, src io.Reader) error {
	buf := chunkBufs.Get().(*[ChunkSize]byte)
	defer chunkBufs.Put(buf)
	var total int64
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		select {
		case <-c.done:
			return nil
		default:
		}
		n, err := io.ReadFull(src, buf[:])
		last := err == io.EOF || err == io.ErrUnexpectedEOF
		if err != nil && !last {
			return coffer.Internal(err, "reading the source image failed")
		}
		if total += int64(n); total > w.limits.MaxSourceBytes {
			return w.limits.CheckSize(total)
		}
		chunk := &imagerpc.Chunk{Data: buf[:n], Last: last}
		if err := w.fw.WriteFrame(&imagerpc.Frame{Id: id, Body: &imagerpc.Frame_Chunk{Chunk: chunk}}); err != nil {
			return errWrite
		}
		if last {
			return nil
		}
	}
}

// result returns the call's outcome once done is closed.
func (c *call) result() (*imaging.Result, error) {
	if c.err != nil {
		return nil, c.err
	}
	if e := c.resp.GetError(); e != nil {
		return nil, errorFromProto(e)
	}
	r := c.resp
	return &imaging.Result{
		Data: c.data, Format: imaging.Format(r.GetFormat()), Width: int(r.GetWidth()), Height: int(r.GetHeight()),
		Steps: stepsFromProto(r.GetSteps()),
	}, nil
}
