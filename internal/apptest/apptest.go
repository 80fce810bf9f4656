// Package apptest starts coffer in tests as `coffer serve` runs it (app.New), on
// 127.0.0.1, and stops it when the test ends.
package apptest

import (
	"context"
	"log/slog"
	"net"
	"testing"

	"github.com/coffer/coffer/app"
)

// Config returns app.DefaultConfig over a fresh temp data dir, listening on a
// loopback port that was free a moment ago, with the public URL that goes with it.
func Config(t testing.TB) app.Config {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c := app.DefaultConfig()
	c.DataDir, c.Listen, c.Version = t.TempDir(), ln.Addr().String(), "test"
	c.PublicURL = "http://" + c.Listen
	return c
}

// Start builds coffer from cfg and parts and runs it until the test ends, when it
// stops (draining requests in flight) and closes; an error of either fails the test.
func Start(t testing.TB, cfg app.Config, parts app.Parts, log *slog.Logger) *app.Main {
	t.Helper()
	m, err := app.New(context.Background(), cfg, parts, log)
	if err != nil {
		t.Fatal(err)
	}
	stop, err := m.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Errorf("stopping coffer: %v", err)
		}
	})
	return m
}
