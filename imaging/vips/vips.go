//go:build !novips

package vips

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sync"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/imaging"
	govips "github.com/davidbyttow/govips/v2/vips"
)

// Engine transforms images with libvips on a bounded worker pool.
type Engine struct {
	cfg  imaging.Config
	pool *imaging.Pool
	bufs *sync.Pool // *bytes.Buffer for sources, reused across transformations
}

var _ imaging.Engine = (*Engine)(nil)

// library is what the process-wide libvips start-up learned.
type library struct {
	avif bool // libheif has an AV1 encoder
}

// start starts libvips once per process: it cannot be stopped and restarted, so no
// Engine shuts it down.
var start = sync.OnceValues(func() (lib library, err error) {
	defer func() {
		if r := recover(); r != nil { // govips panics when libvips cannot start
			err = fmt.Errorf("starting libvips: %v", r)
		}
	}()
	limitArenas()
	govips.LoggingSettings(nil, govips.LogLevelCritical)
	govips.Startup(&govips.Config{ConcurrencyLevel: 1, MaxCacheMem: 0, MaxCacheSize: 0, MaxCacheFiles: 0})
	if err := restrictLoaders(); err != nil {
		return library{}, err
	}
	if _, err := imageField(); err != nil {
		return library{}, err
	}
	return library{avif: canWriteAVIF()}, nil
})

// New returns an engine, EINVALID if cfg is invalid. libvips starts (once per process)
// with the first transformation, not here: it costs about 45 MB of memory, which a
// server that never transforms an image should not pay.
func New(cfg imaging.Config) (*Engine, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	bufs := &sync.Pool{New: func() any { return new(bytes.Buffer) }}
	return &Engine{cfg: cfg, pool: imaging.NewPool(cfg.Workers, cfg.Queue), bufs: bufs}, nil
}

// Transform implements imaging.Engine: it waits for a worker, then reads src and runs
// the pipeline described in the package comment.
func (e *Engine) Transform(ctx context.Context, src io.Reader, o imaging.Options) (*imaging.Result, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if _, err := start(); err != nil {
		return nil, coffer.Internal(err, "image library failed to start")
	}
	var res *imaging.Result
	err := e.pool.Do(ctx, func(ctx context.Context) error {
		ctx, cancel := context.WithTimeoutCause(ctx, e.cfg.Timeout, imaging.ErrTimeout)
		defer cancel()
		j := &job{cfg: e.cfg, opts: o.Normalize(), canWrite: e.Supports, bufs: e.bufs}
		defer j.close()
		var err error
		res, err = j.run(ctx, src)
		return err
	})
	return res, err
}

// Supports reports whether f is an output format this libvips writes: JPEG, PNG and
// WebP always, AVIF if libheif has an AV1 encoder.
func (e *Engine) Supports(f imaging.Format) bool {
	lib, err := start()
	return err == nil && (f == imaging.JPEG || f == imaging.PNG || f == imaging.WebP || f == imaging.AVIF && lib.avif)
}

// Pool returns the worker pool, for its Busy and Queued gauges.
func (e *Engine) Pool() *imaging.Pool { return e.pool }

// Close waits for running transforms and refuses new ones with imaging.ErrClosed.
// libvips itself stays started for the life of the process.
func (e *Engine) Close() error {
	e.pool.Close()
	return nil
}

// canWriteAVIF reports whether a 1×1 AVIF can be encoded.
func canWriteAVIF() bool {
	img, err := govips.Black(1, 1)
	if err != nil {
		return false
	}
	defer img.Close()
	p := govips.NewAvifExportParams()
	p.Effort = 0
	_, _, err = img.ExportAvif(p)
	return err == nil
}
