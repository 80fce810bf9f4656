package sqlcore

import (
	"context"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/meta"
)

const deliveryCols = `id, subscription_id, event_id, event_type, state, attempts, next_at,
	last_status, last_error, created_at, updated_at`

// ScanDelivery reads a row of deliveryCols followed by the extra destinations.
func ScanDelivery(r Row, extra ...any) (*coffer.Delivery, error) {
	var d coffer.Delivery
	var typ string
	dest := append([]any{&d.ID, &d.SubscriptionID, &d.EventID, &typ, &d.State, &d.Attempts,
		Time{&d.NextAttemptAt}, &d.LastStatus, &d.LastError, Time{&d.CreatedAt}, Time{&d.UpdatedAt}}, extra...)
	if err := r.Scan(dest...); err != nil {
		return nil, err
	}
	d.EventType = coffer.EventType(typ)
	return &d, nil
}

// ScanClaim reads a row of deliveryCols followed by the subscription's url and secret,
// the event's payload and the delivery's claim count.
func ScanClaim(r Row) (*meta.Claim, error) {
	c := &meta.Claim{}
	var payload string
	d, err := ScanDelivery(r, &c.URL, &c.Secret, &payload, &c.Token)
	if err != nil {
		return nil, err
	}
	c.Delivery, c.Payload = *d, []byte(payload)
	return c, nil
}

// ListDeliveries returns deliveries of q.SubscriptionID, newest first.
func (s *Store) ListDeliveries(ctx context.Context, q meta.DeliveryQuery) ([]*coffer.Delivery, error) {
	query := `SELECT ` + deliveryCols + ` FROM webhook_deliveries WHERE tenant_id = ? AND subscription_id = ?`
	args := []any{s.tenant, q.SubscriptionID}
	if q.State != "" {
		query += ` AND state = ?`
		args = append(args, q.State)
	}
	rows, err := s.db.Query(ctx, query+` ORDER BY id DESC LIMIT ?`, append(args, meta.DeliveryLimit(q.Limit))...)
	out, err := Collect(rows, err, func(r Row) (*coffer.Delivery, error) { return ScanDelivery(r) })
	return out, s.err(err, "list deliveries")
}

// Redeliver makes a delivery pending again, due at now, with a fresh attempt budget.
func (s *Store) Redeliver(ctx context.Context, subID string, id int64, now time.Time) error {
	leased, err := s.d.Redeliver(ctx, s.db, s.tenant, subID, id, now)
	switch {
	case IsNoRows(err):
		return meta.ErrDeliveryNotFound(subID, id)
	case err != nil:
		return s.err(err, "redeliver")
	case leased:
		return meta.ErrDeliveryInFlight(id)
	}
	s.fireEvent()
	return nil
}

// ClaimDeliveries leases up to limit due deliveries.
func (s *Store) ClaimDeliveries(ctx context.Context, now, leaseUntil time.Time, limit int) ([]*meta.Claim, error) {
	out, err := s.d.Claim(ctx, s.db, now, leaseUntil, limit)
	if err != nil {
		return nil, s.err(err, "claim deliveries")
	}
	return out, nil
}

// FinishDelivery records an attempt's outcome unless the delivery was claimed again.
func (s *Store) FinishDelivery(ctx context.Context, c *meta.Claim, o meta.Outcome) error {
	next := o.NextAt
	if o.State != coffer.DeliveryPending {
		next = o.At
	}
	_, err := s.db.Write(ctx, `UPDATE webhook_deliveries SET state = ?, next_at = ?, last_status = ?,
		last_error = ?, updated_at = ?, claimed = `+s.d.False+` WHERE id = ? AND claims = ? AND state = 'pending'`,
		o.State, s.d.Time(next), o.Status, o.Error, s.d.Time(o.At), c.Delivery.ID, c.Token)
	return s.err(err, "finish delivery")
}

// Prune removes finished deliveries older than olderThan and events left without any.
func (s *Store) Prune(ctx context.Context, olderThan time.Time) (int, error) {
	var n int64
	err := s.write(ctx, "prune deliveries", func(tx Querier) error {
		var err error
		n, err = tx.Exec(ctx, `DELETE FROM webhook_deliveries WHERE state <> 'pending' AND updated_at < ?`,
			s.d.Time(olderThan))
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `DELETE FROM webhook_events WHERE created_at < ? AND NOT EXISTS
			(SELECT 1 FROM webhook_deliveries d WHERE d.event_id = webhook_events.id)`, s.d.Time(olderThan))
		return err
	})
	return int(n), err
}

// ReleaseClaims makes every leased delivery due at now.
func (s *Store) ReleaseClaims(ctx context.Context, now time.Time) (int, error) {
	n, err := s.db.Write(ctx, `UPDATE webhook_deliveries SET claimed = `+s.d.False+`, next_at = ?
		WHERE state = 'pending' AND claimed = `+s.d.True, s.d.Time(now))
	if err != nil {
		return 0, s.err(err, "release claims")
	}
	return int(n), nil
}
