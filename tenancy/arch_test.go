package tenancy_test

import (
	"testing"

	"github.com/coffer/coffer/internal/archtest"
)

// TestTenancyKnowsNoFace: the tenancy runtime hands requests to a tenant's faces
// and has them write its refusals (Faces) but knows none of them, nor the wiring
// that builds them, directly or through another package.
func TestTenancyKnowsNoFace(t *testing.T) {
	faces := []string{"api", "rpcapi", "console", "app"}
	for i, f := range faces {
		faces[i] = "github.com/coffer/coffer/" + f
	}
	archtest.DependsOnNone(t, "tenancy", faces...)
}
