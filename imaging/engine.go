package imaging

import (
	"bytes"
	"context"
	"io"
	"time"

	"github.com/coffer/coffer"
)

// Engine transforms images. imaging/vips implements it with libvips, imaging/remote by
// sending the work to a coffer-imager process that runs imaging/vips, and Disabled
// by refusing it.
type Engine interface {
	// Transform reads one source image from src and returns it transformed by o.
	// Formats FormatKeep and FormatAuto, if not resolved by Negotiate, mean the
	// source format (GIF→PNG, HEIF→JPEG). Only the first frame of an animation is
	// transformed. The source is read whole into memory, after a worker is free, so
	// peak memory is about Workers × (MaxSourceBytes + decoder working set + output);
	// the working set is small for JPEG (shrink-on-load, sequential access) and can
	// reach 4 bytes per source pixel for interlaced PNG and progressive JPEG.
	//
	// Errors: EUNSUPPORTED if src is not a JPEG, PNG, GIF, WebP, AVIF or HEIF image
	// or is damaged; ETOOLARGE if it exceeds MaxSourceBytes, MaxSourcePixels or
	// MaxFrames (checked before decoding); EINVALID if o is invalid or the result
	// would exceed MaxOutputPixels; ENOTIMPLEMENTED if the engine cannot write the
	// format; EUNAVAILABLE (ErrBusy, ErrClosed) if the pool refuses the work;
	// ctx.Err() if ctx ends first.
	Transform(ctx context.Context, src io.Reader, o Options) (*Result, error)

	// Supports reports whether the engine writes format f (for NegotiateFor).
	Supports(f Format) bool

	// Pool returns the engine's worker pool, for its gauges.
	Pool() *Pool

	// Close waits for running transforms and refuses new ones.
	Close() error
}

// Result is a transformed image.
type Result struct {
	Data          []byte
	Format        Format
	Width, Height int
	Steps         []StepTiming // wall time of each pipeline step (for Server-Timing)
}

// MIME returns the media type of the image.
func (r *Result) MIME() string { return r.Format.MIME() }

// ErrNotImage is the error for sources an engine will not decode.
var ErrNotImage error = &coffer.Error{Code: coffer.EUNSUPPORTED, Message: "file is not an image coffer can transform"}

// ReadSource reads src whole, refusing more than MaxSourceBytes with ETOOLARGE (the
// caller may check a known size first with CheckSize). sizeHint, if positive, sizes
// the buffer in one allocation.
func (c Config) ReadSource(src io.Reader, sizeHint int64) ([]byte, error) {
	return c.ReadSourceInto(new(bytes.Buffer), src, sizeHint)
}

// ReadSourceInto is ReadSource into buf (reset first), so callers can reuse buffers:
// a source image is megabytes, and garbage of that size makes the Go collector run
// often, slowing every other request.
func (c Config) ReadSourceInto(buf *bytes.Buffer, src io.Reader, sizeHint int64) ([]byte, error) {
	buf.Reset()
	if sizeHint > 0 && sizeHint <= c.MaxSourceBytes {
		buf.Grow(int(sizeHint) + bytes.MinRead) // room for the read that reports EOF
	}
	n, err := buf.ReadFrom(io.LimitReader(src, c.MaxSourceBytes+1))
	if err != nil {
		return nil, coffer.Internal(err, "reading the source image failed")
	}
	if err := c.CheckSize(n); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Step is one named stage of a transform pipeline.
type Step struct {
	Name string
	Run  func() error
}

// StepTiming is the wall time one step took.
type StepTiming struct {
	Name     string
	Duration time.Duration
}

// RunSteps runs steps in order, checking ctx before each, and returns the time each
// took. It stops at the first error (ctx.Err() if ctx ended).
func RunSteps(ctx context.Context, steps []Step) ([]StepTiming, error) {
	timings := make([]StepTiming, 0, len(steps))
	for _, s := range steps {
		if err := ctx.Err(); err != nil {
			return timings, err
		}
		start := time.Now()
		err := s.Run()
		timings = append(timings, StepTiming{Name: s.Name, Duration: time.Since(start)})
		if err != nil {
			return timings, err
		}
	}
	return timings, nil
}

// SizeOf returns the size of readers that know it (bytes.Reader, strings.Reader,
// io.SectionReader), else 0: a hint for sizing buffers and checking limits early.
func SizeOf(r io.Reader) int64 {
	switch s := r.(type) {
	case interface{ Len() int }:
		return int64(s.Len())
	case interface{ Size() int64 }:
		return s.Size()
	}
	return 0
}
