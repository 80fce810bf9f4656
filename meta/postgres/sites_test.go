package postgres_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/bus"
	pgbus "github.com/coffer/coffer/bus/postgres"
	"github.com/coffer/coffer/internal/pgtest"
	"github.com/coffer/coffer/meta"
	"github.com/coffer/coffer/meta/metatest"
	"github.com/jackc/pgx/v5"
)

// listen returns a connection to u listening on the cluster bus's channel.
func listen(t *testing.T, u string) *pgx.Conn {
	t.Helper()
	l, err := pgx.Connect(t.Context(), u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close(context.Background()) })
	if _, err := l.Exec(t.Context(), "LISTEN "+pgbus.Channel); err != nil {
		t.Fatal(err)
	}
	return l
}

// next returns the next payload on l (within 5s), skipping those in skip.
func next(t *testing.T, l *pgx.Conn, skip ...string) string {
	t.Helper()
	for {
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		n, err := l.WaitForNotification(ctx)
		cancel()
		if err != nil {
			t.Fatalf("no notification: %v", err)
		}
		if _, err := bus.Decode(n.Payload); err != nil && n.Payload != "marker" {
			t.Errorf("received %q, not a cluster bus event: %v", n.Payload, err)
		}
		if !slices.Contains(skip, n.Payload) {
			return n.Payload
		}
	}
}

// TestSiteNotifyPayloads: every change to a tenant's sites sends "s:<tenant>" ("s:"
// for the default tenant's), once per transaction.
func TestSiteNotifyPayloads(t *testing.T) {
	u := freshSchema(t, databaseURL(t))
	s := open(t, u)
	metatest.Migrated(t, s)
	ctx := t.Context()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(s.CreateTenant(ctx, &coffer.Tenant{ID: "t1"}))
	l := listen(t, u)
	for _, c := range []struct{ tenant, want string }{{"t1", "s:t1"}, {coffer.DefaultTenantID, "s:"}} {
		v := s.ForTenant(c.tenant).(meta.Sites)
		must(v.CreateSite(ctx, &coffer.Site{ID: "www", Hosts: []string{c.want + "www.example"}}))
		_, err := v.UpdateSite(ctx, "www", []string{c.want + "www2.example"}, []byte(`{}`))
		must(err)
		must(v.DeleteSite(ctx, "www"))
		for _, op := range []string{"create", "update", "delete"} {
			if got := next(t, l); got != c.want {
				t.Errorf("%s of tenant %q's site: payload %q, want %q", op, c.tenant, got, c.want)
			}
		}
	}
	pgtest.Exec(t, u, "SELECT pg_notify('"+pgbus.Channel+"', 'marker')") // nothing else was sent before it
	if got := next(t, l); got != "marker" {
		t.Errorf("after the six changes: payload %q, want only one per transaction", got)
	}
}
