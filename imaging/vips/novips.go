//go:build novips

package vips

import (
	"context"
	"io"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/imaging"
)

// Engine is the engine of a build without libvips: it transforms nothing.
type Engine struct {
	pool *imaging.Pool
}

var _ imaging.Engine = (*Engine)(nil)

// New returns an engine whose Transform answers ENOTIMPLEMENTED, or EINVALID if cfg
// is invalid.
func New(cfg imaging.Config) (*Engine, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Engine{pool: imaging.NewPool(cfg.Workers, cfg.Queue)}, nil
}

// Transform returns ENOTIMPLEMENTED.
func (e *Engine) Transform(context.Context, io.Reader, imaging.Options) (*imaging.Result, error) {
	return nil, coffer.Errorf(coffer.ENOTIMPLEMENTED, "image transformations are not available in this build (built with -tags novips)")
}

// Supports returns false: no format can be written.
func (e *Engine) Supports(imaging.Format) bool { return false }

// Pool returns an idle pool, for the same gauges as the libvips engine.
func (e *Engine) Pool() *imaging.Pool { return e.pool }

// Close closes the pool.
func (e *Engine) Close() error {
	e.pool.Close()
	return nil
}
