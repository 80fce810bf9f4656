package coffer_test

import (
	"testing"

	"github.com/coffer/coffer/internal/archtest"
)

// TestDomainDependsOnLittle: the root package (doc.go) imports no other coffer
// package and, beyond the standard library, only two small libraries, so that any
// layer, tool or test can import the domain without pulling in infrastructure.
func TestDomainDependsOnLittle(t *testing.T) {
	archtest.DependsOnlyOn(t, "coffer", "github.com/google/uuid", "golang.org/x/text/...")
}
