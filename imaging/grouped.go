package imaging

import (
	"context"
	"io"
)

// Grouped is an engine whose transformations all run as one group of the worker
// pool (WithGroup): a tenant's, so that a tenant flooding transformations leaves
// the others their share.
type Grouped struct {
	Engine
	Group   string
	Workers int // the group's cap; 0: the pool's default
}

// Transform implements Engine.
func (e Grouped) Transform(ctx context.Context, src io.Reader, o Options) (*Result, error) {
	return e.Engine.Transform(WithGroup(ctx, e.Group, e.Workers, 0), src, o)
}
