package service_test

import (
	"testing"

	"github.com/coffer/coffer/internal/archtest"
)

// TestServiceDependsOnNoWireFormat: the use cases take domain types, never wire
// bytes (DESIGN.md practice 12): no package service depends on, even through
// another, imports protojson or a generated proto package.
func TestServiceDependsOnNoWireFormat(t *testing.T) {
	archtest.DependsOnNone(t, "service", "google.golang.org/protobuf/encoding/protojson", "github.com/coffer/coffer/proto/gen")
}
