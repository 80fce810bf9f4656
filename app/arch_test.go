package app_test

import (
	"testing"

	"github.com/coffer/coffer/internal/archtest"
)

// wireFormats are the management API's wire types and their JSON encoding: they
// meet domain types in rpcapi only (DESIGN.md practice 12).
var wireFormats = []string{"google.golang.org/protobuf/encoding/protojson", "github.com/coffer/coffer/proto/gen"}

// TestAppImportsNoWireFormat: app wires the faces to the use cases and converts
// nothing between them, so it imports neither protojson nor a generated proto
// package (it reaches them only through rpcapi, which it wires).
func TestAppImportsNoWireFormat(t *testing.T) {
	archtest.ImportsNoneOf(t, "app", wireFormats...)
}

// TestAppRunsNoSites: the sites runtime (package sites) serves the sites, their
// edge cache and audit log; app only builds and connects it.
func TestAppRunsNoSites(t *testing.T) {
	archtest.ImportsNone(t, "app", "site")
}

// TestAppMeetsHasuraInFacesOnly: app builds every tenant's faces from one list
// (faces.go), the only file that knows the hasura face; the rest of app wires
// faces without knowing which they are.
func TestAppMeetsHasuraInFacesOnly(t *testing.T) {
	archtest.ImportedOnlyIn(t, "app", "github.com/coffer/coffer/api/hasura", "faces.go")
}
