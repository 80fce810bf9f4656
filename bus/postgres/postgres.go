// Package postgres is the cluster bus over PostgreSQL: Publish sends an event with
// pg_notify on Channel, Run listens on it on a dedicated connection. The metadata
// store's triggers (meta/postgres/migrations) send on the same channel in the same
// wire format (bus.Encode), so every node hears every committed change.
package postgres

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/bus"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Channel is the notification channel: the metadata triggers send on it too (see
// meta/postgres/migrations/0003_notify.sql).
const Channel = "coffer_invalidate"

// Bus is both halves of the bus for the database at one connection string.
//
// Run holds one dedicated connection (not from a pool, which would hand it back) in
// LISTEN; after every (re)connect it delivers bus.Everything, because notifications
// sent while it was disconnected are lost. A connection that stays quiet for
// PingEvery is pinged: one that died without a word (a NAT or firewall that dropped
// it, a failover behind a proxy) would otherwise go unnoticed for as long as TCP
// keepalive takes, minutes in which this node misses every event. A notification
// that does not decode (a kind from a newer version, a corrupt payload) is delivered
// as bus.Everything, erring on the safe side.
//
// Publish sends on a small pool of its own (at most two connections, made when
// first needed and closed after a minute idle): the metadata store's pool is the
// store's, and the bus knows no store.
type Bus struct {
	// PingEvery and PingTimeout (set before Run): after PingEvery without a
	// notification the connection is pinged, and one that does not answer within
	// PingTimeout is dropped and made again.
	PingEvery   time.Duration
	PingTimeout time.Duration

	connString string
	pub        *pgxpool.Pool
	log        *slog.Logger

	connected  atomic.Bool
	received   atomic.Int64
	reconnects atomic.Int64
}

var (
	_ bus.Publisher = (*Bus)(nil)
	_ bus.Listener  = (*Bus)(nil)
)

// New returns the bus of the database at connString, pinging a quiet listening
// connection every 30 s with a 5 s timeout. It connects to nothing yet: Run
// listens, Publish connects when first called. The caller must Close it.
func New(connString string, log *slog.Logger) (*Bus, error) {
	cfg, err := pgxpool.ParseConfig(connString)
	if err != nil {
		return nil, fmt.Errorf("cluster bus: %w", err)
	}
	cfg.MaxConns, cfg.MinConns, cfg.MaxConnIdleTime = 2, 0, time.Minute
	pub, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		return nil, fmt.Errorf("cluster bus: %w", err)
	}
	return &Bus{connString: connString, pub: pub, log: log, PingEvery: 30 * time.Second, PingTimeout: 5 * time.Second}, nil
}

// Close closes the publishing connections; Run stops with its context.
func (b *Bus) Close() { b.pub.Close() }

// Publish sends e to every node listening, this one included, once the statement
// commits. EINVALID for an event bus.Encode refuses, one encoded longer than
// bus.MaxPayload bytes or holding a NUL (text PostgreSQL cannot carry).
func (b *Bus) Publish(ctx context.Context, e bus.Event) error {
	p, err := bus.Encode(e)
	switch {
	case err != nil:
		return err
	case len(p) > bus.MaxPayload:
		return coffer.Errorf(coffer.EINVALID, "cluster event of %d bytes (at most %d)", len(p), bus.MaxPayload)
	case strings.IndexByte(p, 0) >= 0:
		return coffer.Errorf(coffer.EINVALID, "cluster event holding a NUL")
	}
	if _, err := b.pub.Exec(ctx, `SELECT pg_notify($1, $2)`, Channel, p); err != nil {
		return fmt.Errorf("cluster bus: publish: %w", err)
	}
	return nil
}

// Connected reports whether the bus is listening now.
func (b *Bus) Connected() bool { return b.connected.Load() }

// Received and Reconnects return counts since start (for metrics): notifications
// received, and reconnections of the listening connection.
func (b *Bus) Received() int64   { return b.received.Load() }
func (b *Bus) Reconnects() int64 { return b.reconnects.Load() }

// Run listens until ctx is done, delivering to h, reconnecting with backoff (100 ms
// doubling to 5 s).
func (b *Bus) Run(ctx context.Context, h bus.Handler) {
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		err := b.listen(ctx, h)
		if b.connected.Swap(false) {
			backoff = 100 * time.Millisecond // it was up: start over
		}
		if ctx.Err() != nil {
			return
		}
		b.reconnects.Add(1)
		b.log.Warn("cluster bus disconnected; reconnecting", "err", err, "in", backoff.String())
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 5*time.Second)
	}
}

// listen holds one connection until it fails or ctx is done.
func (b *Bus) listen(ctx context.Context, h bus.Handler) error {
	conn, err := pgx.Connect(ctx, b.connString)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "LISTEN "+Channel); err != nil {
		return err
	}
	h(bus.Event{Kind: bus.Everything}) // whatever changed while we were not listening
	b.connected.Store(true)
	for {
		wctx, cancel := context.WithTimeout(ctx, b.PingEvery)
		n, err := conn.WaitForNotification(wctx)
		cancel()
		if err == nil {
			b.received.Add(1)
			h(b.decode(n.Payload))
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

// decode decodes payload, or returns Everything for one that does not decode.
func (b *Bus) decode(payload string) bus.Event {
	e, err := bus.Decode(payload)
	if err != nil {
		b.log.Debug("cluster bus: flushing for a message it cannot read", "err", err)
		return bus.Event{Kind: bus.Everything}
	}
	return e
}
