// Package pgtest gives tests a throwaway PostgreSQL schema on the server the test
// script started (COFFER_TEST_DATABASE_URL).
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// DatabaseURL returns COFFER_TEST_DATABASE_URL, skipping the test when it is unset
// (failing instead when COFFER_TEST_REQUIRE_SERVICES=1).
func DatabaseURL(t testing.TB) string {
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

// FreshSchema creates an empty schema, drops it when t ends, and returns base with
// search_path pointing at it.
func FreshSchema(t testing.TB, base string) string {
	t.Helper()
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	schema := "coffer_test_" + hex.EncodeToString(b)
	Exec(t, base, "CREATE SCHEMA "+schema)
	t.Cleanup(func() { Exec(t, base, "DROP SCHEMA "+schema+" CASCADE") })
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

// Exec runs sql on a connection of its own.
func Exec(t testing.TB, dsn, sql string) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}
