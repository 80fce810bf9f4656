package bus_test

import (
	"testing"

	"github.com/coffer/coffer/internal/archtest"
)

// TestBusKnowsNoBackend: the events and their wire format depend on no backend (a
// backend is a subpackage) and on no other coffer package but the root's errors.
func TestBusKnowsNoBackend(t *testing.T) {
	archtest.DependsOnNone(t, "bus", "github.com/jackc/pgx")
	archtest.ImportsNone(t, "bus", "api", "app", "auth", "blob", "bus", "cache", "imaging", "meta", "service", "site", "tenant")
}
