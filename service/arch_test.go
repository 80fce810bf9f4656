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

// TestServiceSpeaksNoFace: the use cases' code names no face (DESIGN.md: a face
// consumes the service): no string or identifier says "hasura" or a face's header
// prefix (an error needing a face's wording carries a typed cause the face rewords,
// as ErrAdminRequired). Comments may say why a behaviour follows hasura-storage.
func TestServiceSpeaksNoFace(t *testing.T) {
	archtest.NamesNone(t, "service", "hasura", "x-amz-", "tus-resumable", "connect-protocol")
}
