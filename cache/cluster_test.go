package cache_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/url"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coffer/coffer"
	pgbus "github.com/coffer/coffer/bus/postgres"
	"github.com/coffer/coffer/cache"
	"github.com/coffer/coffer/internal/pgtest"
)

// node is one coffer node's cached metadata store on the shared database, with its
// cluster bus.
type node struct {
	*cache.Meta
	bus *pgbus.Bus
}

func startNode(t *testing.T, u string) node {
	t.Helper()
	m := cached(t, openPostgres(t, u))
	return node{m, runBus(t, u, m, nil)}
}

// runBus runs a bus on u delivering to m until the test ends; tune sets its pings.
func runBus(t *testing.T, u string, m *cache.Meta, tune func(*pgbus.Bus)) *pgbus.Bus {
	t.Helper()
	bus, err := pgbus.New(u, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if tune != nil {
		tune(bus)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { bus.Run(ctx, m.Handle); close(done) }()
	t.Cleanup(func() { cancel(); <-done; bus.Close() })
	waitFor(t, "bus connected", bus.Connected)
	return bus
}

func waitFor(t *testing.T, what string, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > 10*time.Second {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(200 * time.Microsecond)
	}
	return time.Since(start)
}

// TestCrossNodeInvalidation: a change committed on node A reaches node B's cache
// through the database's notification, however A made it. It logs the p99 delay.
func TestCrossNodeInvalidation(t *testing.T) {
	u := pgtest.FreshSchema(t, pgtest.DatabaseURL(t))
	a, b := startNode(t, u), startNode(t, u)
	ctx := t.Context()
	var delays []time.Duration
	for i := range 40 {
		f := upload(t, a, "f")
		if _, err := b.GetFile(ctx, f.ID); err != nil { // cached on B
			t.Fatal(err)
		}
		if i%2 == 0 {
			_, err := a.DeleteFile(ctx, f.ID)
			must(t, err)
			delays = append(delays, waitFor(t, "delete seen on B", func() bool {
				_, err := b.GetFile(ctx, f.ID)
				return coffer.ErrorCode(err) == coffer.ENOTFOUND
			}))
			continue
		}
		name := "renamed"
		_, err := a.UpdateFile(ctx, f.ID, coffer.FileUpdate{Name: &name})
		must(t, err)
		delays = append(delays, waitFor(t, "rename seen on B", func() bool {
			got, err := b.GetFile(ctx, f.ID)
			return err == nil && got.Name == name
		}))
	}
	public := true
	b.GetBucket(ctx, "default")
	_, err := a.UpdateBucket(ctx, "default", coffer.BucketUpdate{Public: &public})
	must(t, err)
	delays = append(delays, waitFor(t, "bucket change seen on B", func() bool {
		got, err := b.GetBucket(ctx, "default")
		return err == nil && got.Public
	}))
	slices.Sort(delays)
	p99 := delays[len(delays)*99/100]
	t.Logf("cross-node invalidation over %d changes: median %v, p99 %v, max %v",
		len(delays), delays[len(delays)/2], p99, delays[len(delays)-1])
	if p99 > time.Second { // the target is 100 ms; only a gross failure fails the test
		t.Errorf("p99 %v", p99)
	}
}

// Rules stored on A make B reload its rules.
func TestCrossNodeRules(t *testing.T) {
	u := pgtest.FreshSchema(t, pgtest.DatabaseURL(t))
	a, b := startNode(t, u), startNode(t, u)
	var reloads atomic.Int32
	b.OnRulesChanged(func() { reloads.Add(1) })
	must(t, a.PutRules(t.Context(), []byte(`{"rules":[]}`)))
	waitFor(t, "rules reload on B", func() bool { return reloads.Load() > 0 })
}

// When B's listening connection dies, B reconnects and flushes: a change made while
// it was deaf is not served stale.
func TestBusReconnectFlushes(t *testing.T) {
	base := pgtest.DatabaseURL(t)
	u := pgtest.FreshSchema(t, base)
	a, b := startNode(t, u), startNode(t, u)
	ctx := t.Context()
	f := upload(t, a, "f")
	b.GetFile(ctx, f.ID)
	pgtest.Exec(t, base, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE query = 'LISTEN `+pgbus.Channel+`'`)
	waitFor(t, "B notices the lost connection", func() bool { return !b.bus.Connected() })
	name := "changed while B was deaf"
	_, err := a.UpdateFile(ctx, f.ID, coffer.FileUpdate{Name: &name})
	must(t, err)
	waitFor(t, "B reconnects", b.bus.Connected)
	if got, err := b.GetFile(ctx, f.ID); err != nil || got.Name != name {
		t.Fatalf("after reconnect B serves %+v, %v", got, err)
	}
	if b.bus.Reconnects() == 0 {
		t.Fatal("no reconnect counted")
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TRUNCATE fires no row triggers; a statement trigger sends "*", so other nodes flush
// instead of serving files that no longer exist.
func TestTruncateFlushesOtherNodes(t *testing.T) {
	u := pgtest.FreshSchema(t, pgtest.DatabaseURL(t))
	a, b := startNode(t, u), startNode(t, u)
	ctx := t.Context()
	f := upload(t, a, "f")
	if _, err := b.GetFile(ctx, f.ID); err != nil { // cached on B
		t.Fatal(err)
	}
	pgtest.Exec(t, u, "TRUNCATE files CASCADE")
	waitFor(t, "the truncated file gone on B", func() bool {
		_, err := b.GetFile(ctx, f.ID)
		return coffer.ErrorCode(err) == coffer.ENOTFOUND
	})
}

// freezer is a TCP proxy on 127.0.0.1. freeze makes the connections open at the time
// go silent both ways without closing, as when a NAT or firewall drops them; later
// connections pass.
type freezer struct {
	ln     net.Listener
	mu     sync.Mutex
	frozen []*atomic.Bool
	conns  []net.Conn
}

func newFreezer(t *testing.T, target string) *freezer {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &freezer{ln: ln}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			frozen := new(atomic.Bool)
			f.mu.Lock()
			f.frozen, f.conns = append(f.frozen, frozen), append(f.conns, c, s)
			f.mu.Unlock()
			go pipe(s, c, frozen)
			go pipe(c, s, frozen)
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		f.mu.Lock()
		defer f.mu.Unlock()
		for _, c := range f.conns {
			c.Close()
		}
	})
	return f
}

// pipe copies src to dst; once frozen, what arrives is dropped.
func pipe(dst, src net.Conn, frozen *atomic.Bool) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 && !frozen.Load() {
			dst.Write(buf[:n])
		}
		if err != nil {
			dst.Close()
			return
		}
	}
}

func (f *freezer) freeze() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, fr := range f.frozen {
		fr.Store(true)
	}
}

// A listening connection that dies silently (no FIN, no RST: TCP sees nothing wrong)
// is found by the bus's ping after a quiet PingEvery, dropped and made again, and the
// reconnect flush brings the change B missed meanwhile.
func TestBusPingFindsSilentlyDeadConnection(t *testing.T) {
	u := pgtest.FreshSchema(t, pgtest.DatabaseURL(t))
	a := startNode(t, u)
	pu, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	proxy := newFreezer(t, pu.Host)
	pu.Host = proxy.ln.Addr().String()
	m := cached(t, openPostgres(t, u))
	bus := runBus(t, pu.String(), m, func(b *pgbus.Bus) {
		b.PingEvery, b.PingTimeout = 200*time.Millisecond, 300*time.Millisecond
	})

	f := upload(t, a, "f")
	if _, err := m.GetFile(t.Context(), f.ID); err != nil { // cached on B
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond) // quiet periods with answered pings keep the connection
	if bus.Reconnects() != 0 {
		t.Fatalf("%d reconnects of a healthy connection", bus.Reconnects())
	}
	proxy.freeze()
	name := "renamed while B's connection was dead"
	_, err = a.UpdateFile(t.Context(), f.ID, coffer.FileUpdate{Name: &name})
	must(t, err)
	d := waitFor(t, "B sees the change after finding its connection dead", func() bool {
		got, err := m.GetFile(t.Context(), f.ID)
		return err == nil && got.Name == name
	})
	t.Logf("change seen on B %v after its connection went silent (ping every 200ms, timeout 300ms); reconnects %d", d, bus.Reconnects())
}
