package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/meta"
)

var _ meta.Outbox = (*Store)(nil)

// subMatch selects the subscriptions that want an event; args: bucket id, type needle.
const subMatch = `(bucket_id = '' OR bucket_id = ?) AND (event_types = '' OR instr(event_types, ?) > 0)`

// emitFunc stores one event inside the current write transaction.
type emitFunc func(ev *coffer.Event) error

// writeEmit is write for changes that produce events: fn gets an emit function bound to
// the transaction, and the OnEvent hook runs once the transaction committed with at
// least one stored event.
func (s *Store) writeEmit(ctx context.Context, what string, fn func(tx *sql.Tx, emit emitFunc) error) error {
	stored := false
	err := s.write(ctx, what, func(tx *sql.Tx) error {
		stored = false // write may not retry, but stay correct if it ever does
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

// fireEvent runs the OnEvent hook, if set.
func (s *Store) fireEvent() {
	if hook := s.onEvent.Load(); hook != nil {
		(*hook)()
	}
}

// insertEvent stores ev and a delivery per matching subscription; it stores nothing
// (and returns false) when no subscription matches.
func insertEvent(ctx context.Context, tx *sql.Tx, ev *coffer.Event) (bool, error) {
	payload, err := meta.EncodeEvent(ev)
	if err != nil {
		return false, err
	}
	at, needle := micros(ev.Time), meta.EventTypeNeedle(ev.Type)
	res, err := tx.ExecContext(ctx, `INSERT INTO webhook_events (id, type, bucket_id, payload, created_at)
		SELECT ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM webhook_subscriptions WHERE `+subMatch+`)`,
		ev.ID, string(ev.Type), ev.BucketID, string(payload), at, ev.BucketID, needle)
	if err != nil {
		return false, err
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return false, err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO webhook_deliveries
		(subscription_id, event_id, event_type, state, attempts, next_at, created_at, updated_at)
		SELECT id, ?, ?, 'pending', 0, ?, ?, ? FROM webhook_subscriptions WHERE `+subMatch,
		ev.ID, string(ev.Type), at, at, at, ev.BucketID, needle)
	return err == nil, err
}

// OnEvent sets the hook run after a transaction that stored an event commits.
func (s *Store) OnEvent(fn func()) { s.onEvent.Store(&fn) }

// CreateSubscription stores sub, setting CreatedAt.
func (s *Store) CreateSubscription(ctx context.Context, sub *coffer.Subscription) error {
	now := meta.Now()
	err := s.write(ctx, "create subscription", func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO webhook_subscriptions
			(id, bucket_id, event_types, url, secret, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
			sub.ID, sub.BucketID, meta.EventTypesColumn(sub.Events), sub.URL, sub.Secret, micros(now))
		if isUnique(err) {
			return coffer.Errorf(coffer.ECONFLICT, "subscription %s already exists", sub.ID)
		}
		return err
	})
	if err == nil {
		sub.CreatedAt = now
	}
	return err
}

const subCols = `id, bucket_id, event_types, url, created_at`

func scanSub(r scanner) (*coffer.Subscription, error) {
	var sub coffer.Subscription
	var types string
	var created int64
	if err := r.Scan(&sub.ID, &sub.BucketID, &types, &sub.URL, &created); err != nil {
		return nil, err
	}
	sub.Events, sub.CreatedAt = meta.ParseEventTypesColumn(types), fromMicros(created)
	return &sub, nil
}

func subNotFound(id string) error {
	return coffer.Errorf(coffer.ENOTFOUND, "webhook subscription %s not found", id)
}

// GetSubscription returns ENOTFOUND if there is no such subscription.
func (s *Store) GetSubscription(ctx context.Context, id string) (*coffer.Subscription, error) {
	sub, err := scanSub(s.db.QueryRowContext(ctx, `SELECT `+subCols+` FROM webhook_subscriptions WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, subNotFound(id)
	}
	return sub, dbErr(err, "get subscription")
}

// ListSubscriptions returns every subscription ordered by creation.
func (s *Store) ListSubscriptions(ctx context.Context) ([]*coffer.Subscription, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+subCols+` FROM webhook_subscriptions ORDER BY created_at, id`)
	if err != nil {
		return nil, dbErr(err, "list subscriptions")
	}
	defer rows.Close()
	out := []*coffer.Subscription{}
	for rows.Next() {
		sub, err := scanSub(rows)
		if err != nil {
			return nil, dbErr(err, "list subscriptions")
		}
		out = append(out, sub)
	}
	return out, dbErr(rows.Err(), "list subscriptions")
}

// DeleteSubscription removes a subscription and (by cascade) its deliveries.
func (s *Store) DeleteSubscription(ctx context.Context, id string) error {
	return s.write(ctx, "delete subscription", func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM webhook_subscriptions WHERE id = ?`, id)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err == nil && n == 0 {
			return subNotFound(id)
		}
		return nil
	})
}

const deliveryCols = `id, subscription_id, event_id, event_type, state, attempts, next_at,
	last_status, last_error, created_at, updated_at`

func scanDelivery(r scanner) (*coffer.Delivery, error) {
	var d coffer.Delivery
	var typ string
	var next, created, updated int64
	err := r.Scan(&d.ID, &d.SubscriptionID, &d.EventID, &typ, &d.State, &d.Attempts, &next,
		&d.LastStatus, &d.LastError, &created, &updated)
	if err != nil {
		return nil, err
	}
	d.EventType = coffer.EventType(typ)
	d.NextAttemptAt, d.CreatedAt, d.UpdatedAt = fromMicros(next), fromMicros(created), fromMicros(updated)
	return &d, nil
}

// ListDeliveries returns deliveries of q.SubscriptionID, newest first.
func (s *Store) ListDeliveries(ctx context.Context, q meta.DeliveryQuery) ([]*coffer.Delivery, error) {
	query := `SELECT ` + deliveryCols + ` FROM webhook_deliveries WHERE subscription_id = ?`
	args := []any{q.SubscriptionID}
	if q.State != "" {
		query += ` AND state = ?`
		args = append(args, q.State)
	}
	rows, err := s.db.QueryContext(ctx, query+` ORDER BY id DESC LIMIT ?`, append(args, meta.DeliveryLimit(q.Limit))...)
	if err != nil {
		return nil, dbErr(err, "list deliveries")
	}
	defer rows.Close()
	out := []*coffer.Delivery{}
	for rows.Next() {
		d, err := scanDelivery(rows)
		if err != nil {
			return nil, dbErr(err, "list deliveries")
		}
		out = append(out, d)
	}
	return out, dbErr(rows.Err(), "list deliveries")
}

// Redeliver makes a delivery pending again, due at now, with a fresh attempt budget.
func (s *Store) Redeliver(ctx context.Context, subID string, id int64, now time.Time) error {
	err := s.write(ctx, "redeliver", func(tx *sql.Tx) error {
		var leased bool
		err := tx.QueryRowContext(ctx, `SELECT claimed = 1 AND next_at > ? FROM webhook_deliveries
			WHERE id = ? AND subscription_id = ?`, micros(now), id, subID).Scan(&leased)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return meta.ErrDeliveryNotFound(subID, id)
		case err != nil:
			return err
		case leased:
			return meta.ErrDeliveryInFlight(id)
		}
		_, err = tx.ExecContext(ctx, `UPDATE webhook_deliveries SET state = 'pending', attempts = 0, claimed = 0,
			last_status = 0, last_error = '', next_at = ?, updated_at = ? WHERE id = ?`, micros(now), micros(now), id)
		return err
	})
	if err == nil {
		s.fireEvent()
	}
	return err
}

// ClaimDeliveries leases up to limit due deliveries. SQLite has one writer at a time,
// so selecting and updating inside one write transaction is enough.
func (s *Store) ClaimDeliveries(ctx context.Context, now, leaseUntil time.Time, limit int) ([]*meta.Claim, error) {
	var out []*meta.Claim
	err := s.write(ctx, "claim deliveries", func(tx *sql.Tx) error {
		var err error
		out, err = selectDue(ctx, tx, now, limit)
		if err != nil || len(out) == 0 {
			return err
		}
		ids := make([]any, 0, len(out)+2)
		ids = append(ids, micros(leaseUntil), micros(now))
		for _, c := range out {
			c.Token++
			c.Delivery.Attempts++
			c.Delivery.NextAttemptAt, c.Delivery.UpdatedAt = fromMicros(micros(leaseUntil)), fromMicros(micros(now))
			ids = append(ids, c.Delivery.ID)
		}
		_, err = tx.ExecContext(ctx, `UPDATE webhook_deliveries SET attempts = attempts + 1, next_at = ?,
			updated_at = ?, claimed = 1, claims = claims + 1 WHERE id IN (?`+strings.Repeat(", ?", len(out)-1)+`)`, ids...)
		return err
	})
	return out, err
}

func selectDue(ctx context.Context, tx *sql.Tx, now time.Time, limit int) ([]*meta.Claim, error) {
	rows, err := tx.QueryContext(ctx, `SELECT d.id, d.subscription_id, d.event_id, d.event_type, d.state,
		d.attempts, d.next_at, d.last_status, d.last_error, d.created_at, d.updated_at, s.url, s.secret, e.payload, d.claims
		FROM webhook_deliveries d JOIN webhook_subscriptions s ON s.id = d.subscription_id
		JOIN webhook_events e ON e.id = d.event_id
		WHERE d.state = 'pending' AND d.next_at <= ? ORDER BY d.next_at, d.id LIMIT ?`, micros(now), limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*meta.Claim
	for rows.Next() {
		c := &meta.Claim{}
		var payload string
		d, err := scanDelivery(claimScanner{rows, []any{&c.URL, &c.Secret, &payload, &c.Token}})
		if err != nil {
			return nil, err
		}
		c.Delivery, c.Payload = *d, []byte(payload)
		out = append(out, c)
	}
	return out, rows.Err()
}

// claimScanner appends extra destinations to a delivery scan.
type claimScanner struct {
	r     scanner
	extra []any
}

func (c claimScanner) Scan(dest ...any) error { return c.r.Scan(append(dest, c.extra...)...) }

// FinishDelivery records an attempt's outcome unless the delivery was claimed again.
func (s *Store) FinishDelivery(ctx context.Context, c *meta.Claim, o meta.Outcome) error {
	next := o.NextAt
	if o.State != coffer.DeliveryPending {
		next = o.At
	}
	return s.write(ctx, "finish delivery", func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE webhook_deliveries SET state = ?, next_at = ?, last_status = ?,
			last_error = ?, updated_at = ?, claimed = 0 WHERE id = ? AND claims = ? AND state = 'pending'`,
			o.State, micros(next), o.Status, o.Error, micros(o.At), c.Delivery.ID, c.Token)
		return err
	})
}

// Prune removes finished deliveries older than olderThan and events left without any.
func (s *Store) Prune(ctx context.Context, olderThan time.Time) (int, error) {
	var n int64
	err := s.write(ctx, "prune deliveries", func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM webhook_deliveries WHERE state <> 'pending' AND updated_at < ?`, micros(olderThan))
		if err != nil {
			return err
		}
		if n, err = res.RowsAffected(); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM webhook_events WHERE created_at < ? AND NOT EXISTS
			(SELECT 1 FROM webhook_deliveries d WHERE d.event_id = webhook_events.id)`, micros(olderThan))
		return err
	})
	return int(n), err
}

// ReleaseClaims makes every leased delivery due at now.
func (s *Store) ReleaseClaims(ctx context.Context, now time.Time) (int, error) {
	var n int64
	err := s.write(ctx, "release claims", func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE webhook_deliveries SET claimed = 0, next_at = ?
			WHERE state = 'pending' AND claimed = 1`, micros(now))
		if err == nil {
			n, err = res.RowsAffected()
		}
		return err
	})
	return int(n), err
}
