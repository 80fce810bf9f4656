package hasura_test

import (
	"testing"

	"github.com/coffer/coffer/api/hasura"
	"github.com/coffer/coffer/internal/archtest"
	"github.com/coffer/coffer/service"
)

// The service implements every use case the face consumes.
var _ hasura.Service = (*service.Service)(nil)

// TestFaceImports: the face reaches storage only through the service: it imports no
// metadata store, blob store, cache or driver (its tests may, to build a server).
func TestFaceImports(t *testing.T) {
	archtest.ImportsNone(t, "the hasura face", "meta", "blob", "cache")
}
