package cache

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
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
// while it was disconnected are lost.
type Bus struct {
	connString string
	inv        Invalidator
	log        *slog.Logger

	connected     atomic.Bool
	notifications atomic.Int64
	reconnects    atomic.Int64
}

// NewBus returns a bus for the database at connString; Run starts it.
func NewBus(connString string, inv Invalidator, log *slog.Logger) *Bus {
	return &Bus{connString: connString, inv: inv, log: log}
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
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		b.notifications.Add(1)
		b.inv.Invalidate(n.Payload)
	}
}
