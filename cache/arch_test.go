package cache_test

import (
	"testing"

	"github.com/coffer/coffer/internal/archtest"
)

// TestCacheImportsNoDatabaseDriver: the caches decorate the store's interface and
// hear other nodes through typed bus events; no database driver reaches them, even
// through a package they import (the PostgreSQL bus lives in bus/postgres).
func TestCacheImportsNoDatabaseDriver(t *testing.T) {
	archtest.DependsOnNone(t, "cache", "github.com/jackc/pgx", "github.com/coffer/coffer/bus/postgres")
}
