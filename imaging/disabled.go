package imaging

import (
	"context"
	"io"

	"github.com/coffer/coffer"
)

// Disabled is the engine of a server that cannot transform images (no image worker,
// or a build without libvips): every transform answers ENOTIMPLEMENTED (HTTP 501)
// with the reason.
type Disabled struct {
	reason string
	pool   *Pool
}

var _ Engine = (*Disabled)(nil)

// NewDisabled returns an engine that refuses every transform, saying why.
func NewDisabled(reason string) *Disabled {
	return &Disabled{reason: reason, pool: NewPool(1, 0)}
}

// Transform returns ENOTIMPLEMENTED.
func (d *Disabled) Transform(context.Context, io.Reader, Options) (*Result, error) {
	return nil, coffer.Errorf(coffer.ENOTIMPLEMENTED, "image transformations are not available on this server (%s)", d.reason)
}

// Supports returns false: no format can be written.
func (d *Disabled) Supports(Format) bool { return false }

// Pool returns an idle pool, for the same gauges as a working engine.
func (d *Disabled) Pool() *Pool { return d.pool }

// Close closes the pool.
func (d *Disabled) Close() error {
	d.pool.Close()
	return nil
}

// Enabled reports whether e transforms: it is not a Disabled engine.
func Enabled(e Engine) bool {
	_, off := e.(*Disabled)
	return !off
}
