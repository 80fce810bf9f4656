package remote_test

import (
	"testing"

	"github.com/coffer/coffer/internal/archtest"
)

// TestRemoteStaysSmall: the worker protocol, and Open, which chooses the server's
// image engine, depend on the domain, imaging and the wire only. coffer-imager links
// this package: it must not bring in the server's metrics, stores or faces (a metrics
// source over Cluster.Workers is built where both meet, in app).
func TestRemoteStaysSmall(t *testing.T) {
	archtest.DependsOnlyOn(t, "imaging/remote", "github.com/coffer/coffer", "github.com/coffer/coffer/imaging",
		"github.com/coffer/coffer/imaging/remote/imagerpc", "google.golang.org/protobuf/...", "github.com/google/uuid",
		"golang.org/x/...")
}
