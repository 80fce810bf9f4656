package imaging

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"time"

	"github.com/coffer/coffer"
)

// Config holds the limits and the concurrency of image transformations.
type Config struct {
	Workers         int   // transforms running at once (each uses one libvips thread)
	Queue           int   // transforms waiting for a worker; more are refused (EUNAVAILABLE)
	MaxSourceBytes  int64 // largest source file read into memory
	MaxSourcePixels int64 // largest source width×height, checked from the header before decoding
	MaxOutputPixels int64 // largest intermediate or output width×height (Plan.Pixels)
	MaxFrames       int   // most frames (pages) a source may have; only the first is transformed
	// MaxCost is the most work one transformation may ask for, in the units of Cost
	// (checked from the header, before any pixel is decoded): EINVALID beyond it.
	MaxCost int64
	// Timeout is the wall-clock limit of one transformation once it has a worker;
	// beyond it its computation is killed and it fails with EUNAVAILABLE.
	Timeout time.Duration
	// UserWorkers is how many workers one user (imaging.WithUser) may hold at once
	// (0: half the workers, at least one; at most Workers), and UserQueue how many
	// more of that user's transformations may wait; beyond that the user's
	// transformations fail with ErrUserBusy (HTTP 429).
	UserWorkers int
	UserQueue   int
}

// DefaultConfig returns one worker per CPU, a queue of 64, sources up to 64 MiB and
// 50 megapixels with up to 100 frames, outputs up to 25 megapixels, a cost budget of
// DefaultMaxCost, a timeout of DefaultTimeout, and per user half the workers (at
// least one: UserWorkers 0) and a queue of 8.
func DefaultConfig() Config {
	return Config{
		Workers:         runtime.NumCPU(),
		Queue:           64,
		MaxSourceBytes:  64 << 20,
		MaxSourcePixels: 50_000_000,
		MaxOutputPixels: 25_000_000,
		MaxFrames:       100,
		MaxCost:         DefaultMaxCost,
		Timeout:         DefaultTimeout,
		UserQueue:       8,
	}
}

// DefaultTimeout is the default wall-clock limit of one transformation. The most
// expensive transformation within DefaultMaxCost takes about 2 s of CPU on one
// core of the reference machine; the limit leaves room for a loaded machine.
const DefaultTimeout = 10 * time.Second

// PerUserWorkers is how many workers one user may hold: UserWorkers, or half the
// workers (at least one) if it is 0, and never more than Workers.
func (c Config) PerUserWorkers() int {
	if c.UserWorkers == 0 {
		return max(1, c.Workers/2)
	}
	return min(c.UserWorkers, c.Workers)
}

// Validate returns EINVALID if a field is out of range.
func (c Config) Validate() error {
	checks := []struct {
		ok  bool
		msg string
	}{
		{c.Workers >= 1 && c.Workers <= 1024, "imaging workers must be from 1 to 1024"},
		{c.Queue >= 0, "imaging queue must not be negative"},
		{c.MaxSourceBytes >= 1, "imaging max source bytes must be positive"},
		{c.MaxSourcePixels >= 1, "imaging max source pixels must be positive"},
		{c.MaxOutputPixels >= 1, "imaging max output pixels must be positive"},
		{c.MaxFrames >= 1, "imaging max frames must be at least 1"},
		{c.MaxCost >= 1, "imaging max cost must be positive"},
		{c.Timeout > 0, "imaging timeout must be positive"},
		{c.UserWorkers >= 0, "imaging per-user workers must not be negative"},
		{c.UserQueue >= 0, "imaging per-user queue must not be negative"},
	}
	for _, ch := range checks {
		if !ch.ok {
			return coffer.Errorf(coffer.EINVALID, "%s", ch.msg)
		}
	}
	return nil
}

// Header is what an engine learns about a source before decoding its pixels.
type Header struct {
	Format        Format
	Width, Height int // of one frame, as stored (before autorotation)
	Frames        int // 1 for still images
	Orientation   int // EXIF orientation 1..8, 0 if absent
}

// Oriented returns the frame size after EXIF autorotation (orientations 5 to 8 swap
// width and height).
func (h Header) Oriented() (w, ht int) {
	if h.Orientation >= 5 && h.Orientation <= 8 {
		return h.Height, h.Width
	}
	return h.Width, h.Height
}

// CheckSource refuses a source whose header exceeds the limits: ETOOLARGE.
func (c Config) CheckSource(h Header) error {
	if h.Width < 1 || h.Height < 1 {
		return coffer.Errorf(coffer.EUNSUPPORTED, "image declares an empty size %d×%d", h.Width, h.Height)
	}
	if px := int64(h.Width) * int64(h.Height); px > c.MaxSourcePixels {
		return coffer.Errorf(coffer.ETOOLARGE, "image is %d×%d pixels; at most %d pixels can be transformed", h.Width, h.Height, c.MaxSourcePixels)
	}
	if h.Frames > c.MaxFrames {
		return coffer.Errorf(coffer.ETOOLARGE, "image has %d frames; at most %d can be transformed", h.Frames, c.MaxFrames)
	}
	return nil
}

// CheckSize refuses a read source of n bytes (or more) beyond MaxSourceBytes: ETOOLARGE.
func (c Config) CheckSize(n int64) error {
	if n > c.MaxSourceBytes {
		return coffer.Errorf(coffer.ETOOLARGE, "image file is larger than %d bytes, the most that can be transformed", c.MaxSourceBytes)
	}
	return nil
}

// CheckPlan refuses a transform whose intermediate or output size exceeds
// MaxOutputPixels: EINVALID, since a smaller w or h would do.
func (c Config) CheckPlan(p Plan) error {
	if px := p.Pixels(); px > c.MaxOutputPixels {
		return coffer.Errorf(coffer.EINVALID, "transform would make an image of %d pixels (resized to %d×%d); the limit is %d, ask for a smaller w or h",
			px, p.Resize.X, p.Resize.Y, c.MaxOutputPixels)
	}
	return nil
}

// ErrTimeout is the cause of a transformation's context that ran past Timeout.
var ErrTimeout = errors.New("image transformation timed out")

// ContextError is the error of a transformation whose ctx ended: EUNAVAILABLE
// naming the limit if it ran past Timeout (context.Cause is ErrTimeout), else
// ctx.Err().
func (c Config) ContextError(ctx context.Context) error {
	if errors.Is(context.Cause(ctx), ErrTimeout) {
		return &coffer.Error{Code: coffer.EUNAVAILABLE, Err: ErrTimeout,
			Message: fmt.Sprintf("the image transformation took longer than %v, the limit (--image-timeout); ask for a smaller or simpler one", c.Timeout)}
	}
	return ctx.Err()
}
