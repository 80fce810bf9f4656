package postgres_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/coffer/coffer/meta"
	"github.com/coffer/coffer/meta/metatest"
	"github.com/coffer/coffer/meta/postgres"
	"github.com/jackc/pgx/v5"
)

// databaseURL returns COFFER_TEST_DATABASE_URL, skipping the test when it is unset
// (failing instead when COFFER_TEST_REQUIRE_SERVICES=1).
func databaseURL(t *testing.T) string {
	t.Helper()
	u := os.Getenv("COFFER_TEST_DATABASE_URL")
	if u == "" {
		if os.Getenv("COFFER_TEST_REQUIRE_SERVICES") == "1" {
			t.Fatal("COFFER_TEST_DATABASE_URL is not set and COFFER_TEST_REQUIRE_SERVICES=1")
		}
		t.Skip("COFFER_TEST_DATABASE_URL is not set")
	}
	return u
}

// freshSchema creates an empty schema, drops it when t ends, and returns base with
// search_path pointing at it.
func freshSchema(t *testing.T, base string) string {
	t.Helper()
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	schema := "coffer_test_" + hex.EncodeToString(b)
	admin(t, base, "CREATE SCHEMA "+schema)
	t.Cleanup(func() { admin(t, base, "DROP SCHEMA "+schema+" CASCADE") })
	if strings.HasPrefix(base, "postgres://") || strings.HasPrefix(base, "postgresql://") {
		u, err := url.Parse(base)
		if err != nil {
			t.Fatal(err)
		}
		q := u.Query()
		q.Set("search_path", schema)
		u.RawQuery = q.Encode()
		return u.String()
	}
	return base + " search_path=" + schema
}

func admin(t *testing.T, base, sql string) {
	t.Helper()
	ctx := context.WithoutCancel(t.Context())
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

func open(t *testing.T, u string) *postgres.Store {
	t.Helper()
	s, err := postgres.Open(t.Context(), u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	base := databaseURL(t)
	metatest.Run(t, func(t *testing.T) meta.Store {
		s := open(t, freshSchema(t, base))
		if err := s.Migrate(t.Context()); err != nil {
			t.Fatal(err)
		}
		return s
	})
}

func TestMigrateConcurrent(t *testing.T) {
	u := freshSchema(t, databaseURL(t))
	metatest.RunMigrate(t, func(t *testing.T) metatest.Migrator { return open(t, u) })
}
