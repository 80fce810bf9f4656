package postgres_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/bus"
	pgbus "github.com/coffer/coffer/bus/postgres"
	"github.com/coffer/coffer/internal/pgtest"
)

// freshDatabase returns the URL of a new database on the test server, dropped when
// the test ends: notification channels are per database, so no other test's
// notifications (the metadata triggers of tests running beside) arrive here.
func freshDatabase(t *testing.T) string {
	t.Helper()
	base := pgtest.DatabaseURL(t)
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	name := fmt.Sprintf("bus_test_%d", time.Now().UnixNano())
	pgtest.Exec(t, base, "CREATE DATABASE "+name)
	t.Cleanup(func() { pgtest.Exec(t, base, "DROP DATABASE "+name+" WITH (FORCE)") })
	u.Path = "/" + name
	return u.String()
}

// listening runs a bus on u until the test ends and returns it with the events it
// delivers.
func listening(t *testing.T, u string) (*pgbus.Bus, <-chan bus.Event) {
	t.Helper()
	b, err := pgbus.New(u, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	events := make(chan bus.Event, 100)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { b.Run(ctx, func(e bus.Event) { events <- e }); close(done) }()
	t.Cleanup(func() { cancel(); <-done; b.Close() })
	return b, events
}

// next returns the next event (within 5 s).
func next(t *testing.T, events <-chan bus.Event) bus.Event {
	t.Helper()
	select {
	case e := <-events:
		return e
	case <-time.After(5 * time.Second):
		t.Fatal("no event")
		return bus.Event{}
	}
}

// TestPublishReachesListeners: a listener delivers Everything once it listens, then
// every event published, typed as sent (the longest one too); a payload it cannot
// decode arrives as Everything. Publish refuses an event too long for NOTIFY, one
// holding a NUL, or one Encode refuses, with EINVALID, and sends nothing.
func TestPublishReachesListeners(t *testing.T) {
	u := freshDatabase(t)
	b, events := listening(t, u)
	if e := next(t, events); e.Kind != bus.Everything {
		t.Fatalf("first event %+v, want Everything", e)
	}
	purge := bus.Event{Kind: bus.SitePurged, Tenant: "t1", ID: "www", Purge: bus.Purge{Paths: []string{"/é?"}}}
	p, _ := bus.Encode(purge)
	long := purge
	long.Purge.Paths = []string{strings.Repeat("x", bus.MaxPayload-len(p)+len("/é?"))}
	sent := []bus.Event{{Kind: bus.TenantGone, Tenant: "t1"}, purge, long, {Kind: bus.FileChanged, Tenant: "t1", ID: "f"}}
	for _, e := range sent {
		if err := b.Publish(t.Context(), e); err != nil {
			t.Fatalf("Publish(%.80v): %v", e, err)
		}
		if got := next(t, events); !reflect.DeepEqual(got, e) {
			t.Errorf("received %.80v, want %.80v", got, e)
		}
	}
	tooLong := long
	tooLong.Purge.Paths = []string{long.Purge.Paths[0] + "x"}
	for _, e := range []bus.Event{tooLong, {Kind: bus.TenantChanged, Tenant: "nul\x00"}, {Kind: bus.TenantChanged}} {
		if err := b.Publish(t.Context(), e); coffer.ErrorCode(err) != coffer.EINVALID {
			t.Errorf("Publish(%.40v): %v, want EINVALID", e, err)
		}
	}
	pgtest.Exec(t, u, `SELECT pg_notify('`+pgbus.Channel+`', 'x:from a newer version')`)
	if e := next(t, events); e.Kind != bus.Everything {
		t.Errorf("an undecodable payload arrived as %+v, want Everything", e)
	}
	after := bus.Event{Kind: bus.SitesChanged}
	if err := b.Publish(t.Context(), after); err != nil {
		t.Fatal(err)
	}
	if got := next(t, events); !reflect.DeepEqual(got, after) {
		t.Errorf("received %+v after the refused events, want %+v", got, after)
	}
	if b.Received() != int64(len(sent))+2 {
		t.Errorf("Received() = %d, want %d", b.Received(), len(sent)+2)
	}
}
