package cache

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Channel is the PostgreSQL notification channel the metadata triggers send on (see
// meta/postgres/migrations/0003_notify.sql).
const Channel = "coffer_invalidate"

// Invalidator is what a Bus feeds: Meta implements it.
type Invalidator interface {
	Invalidate(key string)
	Flush()
}

// Bus delivers invalidations from other nodes sharing one PostgreSQL database. It
// holds one dedicated connection (not from the pool, which would hand it back) in
// LISTEN; after every (re)connect it flushes the caches, because notifications sent
// while it was disconnected are lost. A connection that stays quiet for PingEvery is
// pinged: one that died without a word (a NAT or firewall that dropped it, a failover
// behind a proxy) would otherwise go unnoticed for as long as TCP keepalive takes,
// minutes in which this node misses every invalidation.
type Bus struct {
	// PingEvery and PingTimeout (set before Run): after PingEvery without a
	// notification the connection is pinged, and one that does not answer within
	// PingTimeout is dropped and made again.
	PingEvery   time.Duration
	PingTimeout time.Duration

	connString string
	inv        Invalidator
	log        *slog.Logger

	connected     atomic.Bool
	notifications atomic.Int64
	reconnects    atomic.Int64
}

// NewBus returns a bus for the database at connString, pinging a quiet connection
// every 30 s with a 5 s timeout; Run starts it.
func NewBus(connString string, inv Invalidator, log *slog.Logger) *Bus {
	return &Bus{connString: connString, inv: inv, log: log, PingEvery: 30 * time.Second, PingTimeout: 5 * time.Second}
}

// Connected reports whether the bus is listening now.
func (b *Bus) Connected() bool { return b.connected.Load() }

// Notifications and Reconnects return counts since start (for metrics).
func (b *Bus) Notifications() int64 { return b.notifications.Load() }
func (b *Bus) Reconnects() int64    { return b.reconnects.Load() }

// Run listens until ctx is done, reconnecting with backoff (100 ms doubling to 5 s).
func (b *Bus) Run(ctx context.Context) {
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		err := b.listen(ctx)
		if b.connected.Swap(false) {
			backoff = 100 * time.Millisecond // it was up: start over
		}
		if ctx.Err() != nil {
			return
		}
		b.reconnects.Add(1)
		b.log.Warn("invalidation bus disconnected; reconnecting", "err", err, "in", backoff.String())
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 5*time.Second)
	}
}

// listen holds one connection until it fails or ctx is done.
func (b *Bus) listen(ctx context.Context) error {
	conn, err := pgx.Connect(ctx, b.connString)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "LISTEN "+Channel); err != nil {
		return err
	}
	b.inv.Flush() // whatever changed while we were not listening
	b.connected.Store(true)
	for {
		wctx, cancel := context.WithTimeout(ctx, b.PingEvery)
		n, err := conn.WaitForNotification(wctx)
		cancel()
		if err == nil {
			b.notifications.Add(1)
			b.inv.Invalidate(n.Payload)
			continue
		}
		if ctx.Err() != nil || !pgconn.Timeout(err) {
			return err
		}
		// Quiet for PingEvery: is anyone still there? (Notifications that arrive
		// during the ping are kept for the next wait.)
		pctx, cancel := context.WithTimeout(ctx, b.PingTimeout)
		err = conn.Ping(pctx)
		cancel()
		if err != nil {
			return fmt.Errorf("the listening connection did not answer a ping: %w", err)
		}
	}
}
