package audit

import (
	"context"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coffer/coffer"
)

// Log is a site's audit log: Write queues a record for the writer goroutine, which
// appends it to Dir/audit.log (rotated by size, bounded in total) and fsyncs every
// FlushEvery; a shipper goroutine, when a collector is set, POSTs what the files hold.
type Log struct {
	cfg      Config
	log      *slog.Logger
	queue    chan Record
	flushReq chan chan struct{}
	stop     chan struct{}
	stopOnce sync.Once
	done     chan struct{} // closed when the writer has returned
	closed   atomic.Bool
	ship     *shipper // nil without a collector
	counters counters
}

// counters are the numbers Stats reports.
type counters struct {
	written, dropped, writeErrors, shipped, shipFailures, bytesOnDisk, files atomic.Int64
}

// Stats counts since New: Written records reached the file (flushed); Dropped records
// were lost (queue full, the file failing, Write after Close); WriteErrors are failed
// opens, writes, fsyncs or renames; Shipped records were acknowledged by the collector;
// ShipFailures are failed POSTs. BytesOnDisk and Files are what Dir holds now.
type Stats struct {
	Written, Dropped, WriteErrors, Shipped, ShipFailures, BytesOnDisk, Files int64
}

// New starts the audit log in cfg.Dir (created if missing). client is used only to
// ship to cfg.Collector (production: the webhook SSRF guard's client); it may be nil
// when no collector is set. Close stops it.
func New(cfg Config, client *http.Client, log *slog.Logger) (*Log, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.Default()
	}
	if err := os.MkdirAll(cfg.Dir, 0o750); err != nil {
		return nil, coffer.Internal(err, "audit log directory")
	}
	l := &Log{cfg: cfg, log: log, queue: make(chan Record, cfg.Buffer),
		flushReq: make(chan chan struct{}), stop: make(chan struct{}), done: make(chan struct{})}
	w, err := newWriter(l)
	if err != nil {
		return nil, err
	}
	if cfg.Collector.URL != "" {
		if client == nil {
			client = &http.Client{}
		}
		if l.ship, err = newShipper(l, client); err != nil {
			return nil, err
		}
	}
	go w.run()
	if l.ship != nil {
		go l.ship.run()
	}
	return l, nil
}

// Write queues a copy of *r for the writer and returns at once: it never blocks and
// never waits for the disk. When the queue is full (the disk is slow or stuck) or the
// log is closed, the record is dropped and counted in Stats.Dropped.
func (l *Log) Write(r *Record) {
	if l.closed.Load() {
		l.counters.dropped.Add(1)
		return
	}
	select {
	case l.queue <- *r:
	default:
		l.counters.dropped.Add(1)
	}
}

// Stats returns the counters.
func (l *Log) Stats() Stats {
	c := &l.counters
	return Stats{Written: c.written.Load(), Dropped: c.dropped.Load(), WriteErrors: c.writeErrors.Load(),
		Shipped: c.shipped.Load(), ShipFailures: c.shipFailures.Load(), BytesOnDisk: c.bytesOnDisk.Load(),
		Files: c.files.Load()}
}

// Flush asks the writer to write and fsync the records queued so far, and waits for
// it until ctx ends.
func (l *Log) Flush(ctx context.Context) error {
	ch := make(chan struct{})
	select {
	case l.flushReq <- ch:
	case <-l.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Query flushes the writer (bounded by ctx) and reads the records matching f from
// the files, as the package's Query does.
func (l *Log) Query(ctx context.Context, f Filter) ([]Record, error) {
	if err := l.Flush(ctx); err != nil {
		return nil, err
	}
	return Query(ctx, l.cfg.Dir, f)
}

// Close stops accepting records, lets the writer write and fsync what is queued, and
// stops the shipper (what it has not shipped stays on disk for the next start). It
// returns ctx's error if that does not finish in time; a writer stuck in a system call
// (a hung disk) then returns when the call does.
func (l *Log) Close(ctx context.Context) error {
	l.closed.Store(true)
	l.stopOnce.Do(func() { close(l.stop) })
	select {
	case <-l.done:
	case <-ctx.Done():
		return ctx.Err()
	}
	l.dropQueued()
	if l.ship != nil {
		return l.ship.close(ctx)
	}
	return nil
}

// dropQueued counts records a Write racing with Close queued after the writer's
// last look.
func (l *Log) dropQueued() {
	for {
		select {
		case <-l.queue:
			l.counters.dropped.Add(1)
		default:
			return
		}
	}
}

// now is the clock of the writer and the shipper.
func now() time.Time { return time.Now() }
