package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/meta"
	"github.com/jackc/pgx/v5"
)

var _ meta.Outbox = (*Store)(nil)

// subMatch selects the subscriptions that want an event; $3 is the bucket id, $4 the
// type needle (see insertEvent's arguments).
const subMatch = `(bucket_id = '' OR bucket_id = $3) AND (event_types = '' OR strpos(event_types, $4) > 0)`

// emitFunc stores one event inside the current transaction.
type emitFunc func(ev *coffer.Event) error

// txEmit is tx for changes that produce events: fn gets an emit function bound to the
// transaction, and the OnEvent hook runs once it committed with a stored event.
func (s *Store) txEmit(ctx context.Context, what string, fn func(tx pgx.Tx, emit emitFunc) error) error {
	stored := false
	err := s.tx(ctx, what, func(tx pgx.Tx) error {
		stored = false
		return fn(tx, func(ev *coffer.Event) error {
			ok, err := insertEvent(ctx, tx, ev)
			stored = stored || ok
			return err
		})
	})
	if err == nil && stored {
		s.fireEvent()
	}
	return err
}

func (s *Store) fireEvent() {
	if hook := s.onEvent.Load(); hook != nil {
		(*hook)()
	}
}

// insertEvent stores ev and a delivery per matching subscription; nothing (false) when
// no subscription matches.
func insertEvent(ctx context.Context, tx pgx.Tx, ev *coffer.Event) (bool, error) {
	payload, err := meta.EncodeEvent(ev)
	if err != nil {
		return false, err
	}
	tag, err := tx.Exec(ctx, `INSERT INTO webhook_events (id, type, bucket_id, payload, created_at)
		SELECT $1::text, $2::text, $3::text, $5::text, $6::timestamptz WHERE EXISTS (SELECT 1 FROM webhook_subscriptions WHERE `+subMatch+`)`,
		ev.ID, string(ev.Type), ev.BucketID, meta.EventTypeNeedle(ev.Type), string(payload), ev.Time)
	if err != nil || tag.RowsAffected() == 0 {
		return false, err
	}
	_, err = tx.Exec(ctx, `INSERT INTO webhook_deliveries
		(subscription_id, event_id, event_type, state, attempts, next_at, created_at, updated_at)
		SELECT id, $1::text, $2::text, 'pending', 0, $5::timestamptz, $5, $5 FROM webhook_subscriptions WHERE `+subMatch+`
		FOR KEY SHARE`,
		ev.ID, string(ev.Type), ev.BucketID, meta.EventTypeNeedle(ev.Type), ev.Time)
	return err == nil, err
}

// OnEvent sets the hook run after a transaction that stored an event commits.
func (s *Store) OnEvent(fn func()) { s.onEvent.Store(&fn) }

// CreateSubscription stores sub, setting CreatedAt.
func (s *Store) CreateSubscription(ctx context.Context, sub *coffer.Subscription) error {
	now := meta.Now()
	_, err := s.pool.Exec(ctx, `INSERT INTO webhook_subscriptions
		(id, bucket_id, event_types, url, secret, created_at) VALUES ($1, $2, $3, $4, $5, $6)`,
		sub.ID, sub.BucketID, meta.EventTypesColumn(sub.Events), sub.URL, sub.Secret, now)
	if pgCode(err) == uniqueViolation {
		return coffer.Errorf(coffer.ECONFLICT, "subscription %s already exists", sub.ID)
	}
	if err != nil {
		return dbErr(err, "create subscription")
	}
	sub.CreatedAt = now
	return nil
}

const subCols = `id, bucket_id, event_types, url, created_at`

func scanSub(r pgx.Row) (*coffer.Subscription, error) {
	var sub coffer.Subscription
	var types string
	if err := r.Scan(&sub.ID, &sub.BucketID, &types, &sub.URL, &sub.CreatedAt); err != nil {
		return nil, err
	}
	sub.Events, sub.CreatedAt = meta.ParseEventTypesColumn(types), sub.CreatedAt.UTC()
	return &sub, nil
}

func subNotFound(id string) error {
	return coffer.Errorf(coffer.ENOTFOUND, "webhook subscription %s not found", id)
}

// GetSubscription returns ENOTFOUND if there is no such subscription.
func (s *Store) GetSubscription(ctx context.Context, id string) (*coffer.Subscription, error) {
	sub, err := scanSub(s.pool.QueryRow(ctx, `SELECT `+subCols+` FROM webhook_subscriptions WHERE id = $1`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, subNotFound(id)
	}
	return sub, dbErr(err, "get subscription")
}

// ListSubscriptions returns every subscription ordered by creation.
func (s *Store) ListSubscriptions(ctx context.Context) ([]*coffer.Subscription, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+subCols+` FROM webhook_subscriptions ORDER BY created_at, id`)
	if err != nil {
		return nil, dbErr(err, "list subscriptions")
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*coffer.Subscription, error) { return scanSub(r) })
	if out == nil {
		out = []*coffer.Subscription{}
	}
	return out, dbErr(err, "list subscriptions")
}

// DeleteSubscription removes a subscription and (by cascade) its deliveries.
func (s *Store) DeleteSubscription(ctx context.Context, id string) error {
	tag, err := s.pool.Exec(ctx, `DELETE FROM webhook_subscriptions WHERE id = $1`, id)
	if err == nil && tag.RowsAffected() == 0 {
		return subNotFound(id)
	}
	return dbErr(err, "delete subscription")
}

const deliveryCols = `id, subscription_id, event_id, event_type, state, attempts, next_at,
	last_status, last_error, created_at, updated_at`

func scanDelivery(r pgx.Row, extra ...any) (*coffer.Delivery, error) {
	var d coffer.Delivery
	var typ string
	dest := append([]any{&d.ID, &d.SubscriptionID, &d.EventID, &typ, &d.State, &d.Attempts, &d.NextAttemptAt,
		&d.LastStatus, &d.LastError, &d.CreatedAt, &d.UpdatedAt}, extra...)
	if err := r.Scan(dest...); err != nil {
		return nil, err
	}
	d.EventType = coffer.EventType(typ)
	d.NextAttemptAt, d.CreatedAt, d.UpdatedAt = d.NextAttemptAt.UTC(), d.CreatedAt.UTC(), d.UpdatedAt.UTC()
	return &d, nil
}

// ListDeliveries returns deliveries of q.SubscriptionID, newest first.
func (s *Store) ListDeliveries(ctx context.Context, q meta.DeliveryQuery) ([]*coffer.Delivery, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+deliveryCols+` FROM webhook_deliveries
		WHERE subscription_id = $1 AND ($2 = '' OR state = $2) ORDER BY id DESC LIMIT $3`,
		q.SubscriptionID, q.State, meta.DeliveryLimit(q.Limit))
	if err != nil {
		return nil, dbErr(err, "list deliveries")
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*coffer.Delivery, error) { return scanDelivery(r) })
	if out == nil {
		out = []*coffer.Delivery{}
	}
	return out, dbErr(err, "list deliveries")
}

// Redeliver makes a delivery pending again, due at now, with a fresh attempt budget.
func (s *Store) Redeliver(ctx context.Context, subID string, id int64, now time.Time) error {
	var leased bool
	err := s.pool.QueryRow(ctx, `WITH d AS (SELECT id, claimed AND next_at > $1 AS leased FROM webhook_deliveries
			WHERE id = $2 AND subscription_id = $3 FOR UPDATE),
		u AS (UPDATE webhook_deliveries w SET state = 'pending', attempts = 0, claimed = false, last_status = 0,
			last_error = '', next_at = $1, updated_at = $1 FROM d WHERE w.id = d.id AND NOT d.leased)
		SELECT leased FROM d`, now, id, subID).Scan(&leased)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return meta.ErrDeliveryNotFound(subID, id)
	case err != nil:
		return dbErr(err, "redeliver")
	case leased:
		return meta.ErrDeliveryInFlight(id)
	}
	s.fireEvent()
	return nil
}

// claimSQL leases due deliveries; rows another node is claiming are skipped, not waited
// for, so each delivery goes to one claimer.
const claimSQL = `WITH due AS (
		SELECT id FROM webhook_deliveries WHERE state = 'pending' AND next_at <= $1
		ORDER BY next_at, id LIMIT $3 FOR UPDATE SKIP LOCKED),
	claimed AS (
		UPDATE webhook_deliveries d SET attempts = d.attempts + 1, next_at = $2, updated_at = $1, claimed = true,
			claims = d.claims + 1
		FROM due WHERE d.id = due.id RETURNING d.*)
	SELECT c.id, c.subscription_id, c.event_id, c.event_type, c.state, c.attempts, c.next_at,
		c.last_status, c.last_error, c.created_at, c.updated_at, s.url, s.secret, e.payload, c.claims
	FROM claimed c JOIN webhook_subscriptions s ON s.id = c.subscription_id
	JOIN webhook_events e ON e.id = c.event_id ORDER BY c.next_at, c.id`

// ClaimDeliveries leases up to limit due deliveries.
func (s *Store) ClaimDeliveries(ctx context.Context, now, leaseUntil time.Time, limit int) ([]*meta.Claim, error) {
	rows, err := s.pool.Query(ctx, claimSQL, now, leaseUntil, limit)
	if err != nil {
		return nil, dbErr(err, "claim deliveries")
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*meta.Claim, error) {
		c := &meta.Claim{}
		var payload string
		d, err := scanDelivery(r, &c.URL, &c.Secret, &payload, &c.Token)
		if err != nil {
			return nil, err
		}
		c.Delivery, c.Payload = *d, []byte(payload)
		return c, nil
	})
	return out, dbErr(err, "claim deliveries")
}

// FinishDelivery records an attempt's outcome unless the delivery was claimed again.
func (s *Store) FinishDelivery(ctx context.Context, c *meta.Claim, o meta.Outcome) error {
	next := o.NextAt
	if o.State != coffer.DeliveryPending {
		next = o.At
	}
	_, err := s.pool.Exec(ctx, `UPDATE webhook_deliveries SET state = $1, next_at = $2, last_status = $3,
		last_error = $4, updated_at = $5, claimed = false WHERE id = $6 AND claims = $7 AND state = 'pending'`,
		o.State, next, o.Status, o.Error, o.At, c.Delivery.ID, c.Token)
	return dbErr(err, "finish delivery")
}

// Prune removes finished deliveries older than olderThan and events left without any.
func (s *Store) Prune(ctx context.Context, olderThan time.Time) (int, error) {
	var n int64
	err := s.tx(ctx, "prune deliveries", func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `DELETE FROM webhook_deliveries WHERE state <> 'pending' AND updated_at < $1`, olderThan)
		if err != nil {
			return err
		}
		n = tag.RowsAffected()
		_, err = tx.Exec(ctx, `DELETE FROM webhook_events e WHERE created_at < $1 AND NOT EXISTS
			(SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id)`, olderThan)
		return err
	})
	return int(n), err
}

// ReleaseClaims makes every leased delivery due at now.
func (s *Store) ReleaseClaims(ctx context.Context, now time.Time) (int, error) {
	tag, err := s.pool.Exec(ctx, `UPDATE webhook_deliveries SET claimed = false, next_at = $1
		WHERE state = 'pending' AND claimed`, now)
	if err != nil {
		return 0, dbErr(err, "release claims")
	}
	return int(tag.RowsAffected()), nil
}
