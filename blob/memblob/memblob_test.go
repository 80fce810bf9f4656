package memblob_test

import (
	"testing"

	"github.com/coffer/coffer/blob"
	"github.com/coffer/coffer/blob/blobtest"
	"github.com/coffer/coffer/blob/memblob"
)

func TestConformance(t *testing.T) {
	blobtest.Run(t, func(*testing.T) blob.Driver { return memblob.New() })
}

// memblob runs no blobtest.RunReopen: it keeps nothing across Close, by design.
