package webhook

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/meta"
)

// Config holds the dispatcher's settings.
type Config struct {
	Timeout          time.Duration // one attempt, connect to last response byte
	MaxAttempts      int           // then the delivery is dead
	BackoffBase      time.Duration // delay after the first failure; doubles each time
	BackoffMax       time.Duration // cap of the delay
	Workers          int           // deliveries in flight at once on this node
	Poll             time.Duration // how often to look for due deliveries without a wake-up
	MaxResponseBytes int64         // read (and discarded) of a receiver's answer
	Retention        time.Duration // finished deliveries are kept this long
	// SingleNode: no other dispatcher shares the outbox (SQLite), so leases left by a
	// crash are released at start instead of waiting for them to end.
	SingleNode bool
}

// DefaultConfig returns the defaults: 5 s timeout, 10 attempts with backoff from 1 s
// doubling to at most 1 h (about 4.5 h in all), 8 workers.
func DefaultConfig() Config {
	return Config{Timeout: 5 * time.Second, MaxAttempts: 10, BackoffBase: time.Second, BackoffMax: time.Hour,
		Workers: 8, Poll: time.Second, MaxResponseBytes: 64 << 10, Retention: 7 * 24 * time.Hour}
}

// Validate checks c.
func (c Config) Validate() error {
	switch {
	case c.Timeout < 100*time.Millisecond || c.Timeout > 5*time.Minute:
		return coffer.Errorf(coffer.EINVALID, "webhook timeout must be between 100ms and 5m")
	case c.MaxAttempts < 1 || c.MaxAttempts > 100:
		return coffer.Errorf(coffer.EINVALID, "webhook attempts must be between 1 and 100")
	case c.BackoffBase <= 0 || c.BackoffMax < c.BackoffBase:
		return coffer.Errorf(coffer.EINVALID, "webhook backoff must be positive, its maximum at least its base")
	case c.Workers < 1 || c.Workers > 1000:
		return coffer.Errorf(coffer.EINVALID, "webhook workers must be between 1 and 1000")
	case c.Poll <= 0 || c.MaxResponseBytes < 0 || c.Retention <= 0:
		return coffer.Errorf(coffer.EINVALID, "webhook poll interval and retention must be positive")
	}
	return nil
}

// Stats counts attempts since start.
type Stats struct {
	Delivered, Failed, Dead atomic.Int64
	InFlight                atomic.Int64
}

// Dispatcher sends pending deliveries from the outbox. Several dispatchers, on one or
// many nodes, can share an outbox: each delivery is claimed by one of them at a time.
type Dispatcher struct {
	cfg    Config
	store  meta.Outbox
	client *http.Client
	log    *slog.Logger
	wake   chan struct{}
	slots  chan struct{}
	now    func() time.Time
	Stats  Stats
}

// New returns a dispatcher over store that sends with client (Guard.Client in
// production: SSRF checks at connect time, no redirects).
func New(cfg Config, store meta.Outbox, client *http.Client, log *slog.Logger) (*Dispatcher, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.Default()
	}
	d := &Dispatcher{cfg: cfg, store: store, client: client, log: log, now: time.Now,
		wake: make(chan struct{}, 1), slots: make(chan struct{}, cfg.Workers)}
	return d, nil
}

// Wake makes the dispatcher look for due deliveries now (store.OnEvent calls it).
func (d *Dispatcher) Wake() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// Run delivers until ctx ends, then waits for the attempts in flight (each bounded by
// the timeout); their outcomes are still recorded.
func (d *Dispatcher) Run(ctx context.Context) {
	var wg sync.WaitGroup
	defer wg.Wait()
	poll := time.NewTicker(d.cfg.Poll)
	defer poll.Stop()
	wg.Add(1)
	go func() { defer wg.Done(); d.pruneEvery(ctx, time.Hour) }()
	if d.cfg.SingleNode {
		if n, err := d.store.ReleaseClaims(ctx, d.now().UTC()); err != nil {
			d.log.Warn("webhook: releasing claims left by a crash failed", "err", err)
		} else if n > 0 {
			d.log.Info("webhook: deliveries interrupted by a crash are due again", "count", n)
		}
	}
	for {
		n := d.dispatch(ctx, &wg)
		if n > 0 && len(d.slots) < cap(d.slots) {
			continue // there may be more due right now
		}
		select {
		case <-ctx.Done():
			return
		case <-d.wake:
		case <-poll.C:
		}
	}
}

// dispatch claims as many due deliveries as there are free workers and starts them.
func (d *Dispatcher) dispatch(ctx context.Context, wg *sync.WaitGroup) int {
	free := cap(d.slots) - len(d.slots)
	if free == 0 || ctx.Err() != nil {
		return 0
	}
	now := d.now().UTC()
	claims, err := d.store.ClaimDeliveries(ctx, now, now.Add(d.lease()), free)
	if err != nil {
		if ctx.Err() == nil {
			d.log.Warn("webhook: claiming deliveries failed", "err", err)
		}
		return 0
	}
	for _, c := range claims {
		d.slots <- struct{}{}
		d.Stats.InFlight.Add(1)
		wg.Add(1)
		go func() {
			defer func() { <-d.slots; d.Stats.InFlight.Add(-1); wg.Done(); d.Wake() }()
			d.attempt(context.WithoutCancel(ctx), c)
		}()
	}
	return len(claims)
}

// lease is how long a claim is held: one attempt's timeout, up to finishTimeout for
// recording the outcome, and a margin. A claim of a node that died is due again when
// it ends (a single node releases its own at start). Leases and due times come from
// each node's clock: keep node clocks synchronised (NTP) to well within the margin.
func (d *Dispatcher) lease() time.Duration { return d.cfg.Timeout + finishTimeout + 5*time.Second }

// finishTimeout bounds recording an attempt's outcome.
const finishTimeout = 10 * time.Second

// pruneEvery removes finished deliveries past the retention, at start and then every
// interval, apart from the claiming loop so a large prune never delays deliveries.
func (d *Dispatcher) pruneEvery(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if n, err := d.store.Prune(ctx, d.now().Add(-d.cfg.Retention)); err != nil && ctx.Err() == nil {
			d.log.Warn("webhook: pruning old deliveries failed", "err", err)
		} else if n > 0 {
			d.log.Info("webhook: pruned old deliveries", "count", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// attempt sends one claimed delivery and records the outcome.
func (d *Dispatcher) attempt(ctx context.Context, c *meta.Claim) {
	status, retryAfter, err := d.send(ctx, c)
	o := d.outcome(c, status, retryAfter, err)
	switch o.State {
	case coffer.DeliveryDelivered:
		d.Stats.Delivered.Add(1)
	case coffer.DeliveryDead:
		d.Stats.Dead.Add(1)
		d.log.Warn("webhook: delivery dead after its last attempt", "delivery", c.Delivery.ID,
			"subscription", c.Delivery.SubscriptionID, "event", c.Delivery.EventID, "err", o.Error)
	default:
		d.Stats.Failed.Add(1)
	}
	fctx, cancel := context.WithTimeout(ctx, finishTimeout)
	defer cancel()
	if err := d.store.FinishDelivery(fctx, c, o); err != nil {
		d.log.Warn("webhook: recording a delivery outcome failed; it is retried when its lease ends",
			"delivery", c.Delivery.ID, "err", err)
	}
}

// send POSTs the event; it returns the receiver's status and Retry-After, or the
// transport error (a refused target included).
func (d *Dispatcher) send(ctx context.Context, c *meta.Claim) (int, time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, d.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.URL, bytes.NewReader(c.Payload))
	if err != nil {
		return 0, 0, err
	}
	h := req.Header
	h.Set("Content-Type", "application/json")
	h.Set("User-Agent", "coffer-webhook/1")
	h.Set("Coffer-Event-Id", c.Delivery.EventID)
	h.Set("Coffer-Event-Type", string(c.Delivery.EventType))
	h.Set("Coffer-Delivery-Id", strconv.FormatInt(c.Delivery.ID, 10))
	h.Set("Coffer-Delivery-Attempt", strconv.Itoa(c.Delivery.Attempts))
	h.Set(SignatureHeader, Sign(c.Secret, d.now(), c.Payload))
	resp, err := d.client.Do(req)
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, d.cfg.MaxResponseBytes))
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return resp.StatusCode, 0, nil
	}
	return resp.StatusCode, parseRetryAfter(resp.Header.Get("Retry-After")), fmt.Errorf("HTTP %d: %s", resp.StatusCode, snippet(body))
}

// outcome turns an attempt's result into the delivery's next state.
func (d *Dispatcher) outcome(c *meta.Claim, status int, retryAfter time.Duration, err error) meta.Outcome {
	now := d.now().UTC()
	if err == nil {
		return meta.Outcome{At: now, State: coffer.DeliveryDelivered, Status: status}
	}
	o := meta.Outcome{At: now, Status: status, Error: errorText(err)}
	if c.Delivery.Attempts >= d.cfg.MaxAttempts {
		o.State = coffer.DeliveryDead
		return o
	}
	o.State, o.NextAt = coffer.DeliveryPending, now.Add(d.backoff(c.Delivery.Attempts, retryAfter))
	return o
}

// backoff is the delay after failed attempt n (1-based): base·2^(n-1) capped at max,
// with "equal jitter" (between half and all of it) so that receivers coming back up
// are not hit by every retry at once; a longer Retry-After is honoured (up to max).
func (d *Dispatcher) backoff(n int, retryAfter time.Duration) time.Duration {
	delay := d.cfg.BackoffMax
	if n-1 < 40 {
		if b := d.cfg.BackoffBase << (n - 1); b > 0 && b < delay {
			delay = b
		}
	}
	delay = delay/2 + rand.N(delay/2+1)
	if retryAfter > delay {
		delay = min(retryAfter, d.cfg.BackoffMax)
	}
	return delay
}

func parseRetryAfter(v string) time.Duration {
	if s, err := strconv.Atoi(v); err == nil && s > 0 {
		return time.Duration(min(s, 86400)) * time.Second
	}
	return 0
}

// errorText is what the delivery log shows of a failed attempt. The guard's refusals
// keep their client-safe message; other errors are shown as they are (the log is for
// admins).
func errorText(err error) string {
	var ce *coffer.Error
	if errors.As(err, &ce) {
		return ce.Message
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return "timed out"
	}
	return snippet([]byte(err.Error()))
}

// snippet returns at most 200 bytes of b as valid UTF-8 text.
func snippet(b []byte) string {
	if len(b) > 200 {
		b = b[:200]
	}
	return string(bytes.ToValidUTF8(bytes.TrimSpace(b), []byte("\uFFFD")))
}
