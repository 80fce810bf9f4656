package sqlcore

import (
	"context"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/meta"
	"github.com/coffer/coffer/webhook/payload"
)

// emitFunc stores one event inside the current transaction.
type emitFunc func(ev *coffer.Event) error

// writeEmit is write for changes that produce events: fn gets an emit function bound to
// the transaction, and the OnEvent hook runs once it committed with a stored event.
func (s *Store) writeEmit(ctx context.Context, what string, fn func(tx Querier, emit emitFunc) error) error {
	stored := false
	err := s.write(ctx, what, func(tx Querier) error {
		stored = false // a DB may retry fn; stay correct if it does
		return fn(tx, func(ev *coffer.Event) error {
			ok, err := s.insertEvent(ctx, tx, ev)
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

// OnEvent sets the hook run after a transaction that stored an event commits.
func (s *Store) OnEvent(fn func()) { s.onEvent.Store(&fn) }

// subMatch selects the tenant's subscriptions that want an event; arguments: tenant,
// bucket id, type needle.
func (s *Store) subMatch() string {
	return `tenant_id = ? AND (bucket_id = '' OR bucket_id = ?) AND (event_types = '' OR ` +
		s.d.Contains("event_types", "?") + `)`
}

// insertEvent stores ev and a delivery per matching subscription; it stores nothing
// (and returns false) when no subscription matches.
func (s *Store) insertEvent(ctx context.Context, tx Querier, ev *coffer.Event) (bool, error) {
	body, err := payload.Encode(ev)
	if err != nil {
		return false, err
	}
	at, needle, ts := s.d.Time(ev.Time), meta.EventTypeNeedle(ev.Type), `CAST(? AS `+s.d.TimeType+`)`
	n, err := tx.Exec(ctx, `INSERT INTO webhook_events (tenant_id, id, type, bucket_id, payload, created_at)
		SELECT CAST(? AS TEXT), CAST(? AS TEXT), CAST(? AS TEXT), CAST(? AS TEXT), CAST(? AS TEXT), `+ts+`
		WHERE EXISTS (SELECT 1 FROM webhook_subscriptions WHERE `+s.subMatch()+`)`,
		s.tenant, ev.ID, string(ev.Type), ev.BucketID, string(body), at, s.tenant, ev.BucketID, needle)
	if err != nil || n == 0 {
		return false, err
	}
	_, err = tx.Exec(ctx, `INSERT INTO webhook_deliveries
		(tenant_id, subscription_id, event_id, event_type, state, attempts, next_at, created_at, updated_at)
		SELECT tenant_id, id, CAST(? AS TEXT), CAST(? AS TEXT), 'pending', 0, `+ts+`, `+ts+`, `+ts+`
		FROM webhook_subscriptions WHERE `+s.subMatch()+s.d.KeyShare,
		ev.ID, string(ev.Type), at, at, at, s.tenant, ev.BucketID, needle)
	return err == nil, err
}

// CreateSubscription stores sub, setting CreatedAt.
func (s *Store) CreateSubscription(ctx context.Context, sub *coffer.Subscription) error {
	now := meta.Now()
	_, err := s.db.Write(ctx, `INSERT INTO webhook_subscriptions
		(tenant_id, id, bucket_id, event_types, url, secret, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		s.tenant, sub.ID, sub.BucketID, meta.EventTypesColumn(sub.Events), sub.URL, sub.Secret, s.d.Time(now))
	if s.d.Unique(err) {
		return coffer.Errorf(coffer.ECONFLICT, "subscription %s already exists", sub.ID)
	}
	if err != nil {
		return s.err(err, "create subscription")
	}
	sub.CreatedAt = now
	return nil
}

const subCols = `id, bucket_id, event_types, url, created_at`

// scanSub reads a row of subCols.
func scanSub(r Row) (*coffer.Subscription, error) {
	var sub coffer.Subscription
	var types string
	if err := r.Scan(&sub.ID, &sub.BucketID, &types, &sub.URL, Time{&sub.CreatedAt}); err != nil {
		return nil, err
	}
	sub.Events = meta.ParseEventTypesColumn(types)
	return &sub, nil
}

func subNotFound(id string) error {
	return coffer.Errorf(coffer.ENOTFOUND, "webhook subscription %s not found", id)
}

// GetSubscription returns ENOTFOUND if there is no such subscription.
func (s *Store) GetSubscription(ctx context.Context, id string) (*coffer.Subscription, error) {
	sub, err := scanSub(s.db.QueryRow(ctx, `SELECT `+subCols+` FROM webhook_subscriptions WHERE tenant_id = ? AND id = ?`,
		s.tenant, id))
	if IsNoRows(err) {
		return nil, subNotFound(id)
	}
	return sub, s.err(err, "get subscription")
}

// ListSubscriptions returns every subscription ordered by creation.
func (s *Store) ListSubscriptions(ctx context.Context) ([]*coffer.Subscription, error) {
	rows, err := s.db.Query(ctx, `SELECT `+subCols+` FROM webhook_subscriptions WHERE tenant_id = ?
		ORDER BY created_at, id`, s.tenant)
	out, err := Collect(rows, err, scanSub)
	return out, s.err(err, "list subscriptions")
}

// DeleteSubscription removes a subscription and (by cascade) its deliveries.
func (s *Store) DeleteSubscription(ctx context.Context, id string) error {
	n, err := s.db.Write(ctx, `DELETE FROM webhook_subscriptions WHERE tenant_id = ? AND id = ?`, s.tenant, id)
	if err == nil && n == 0 {
		return subNotFound(id)
	}
	return s.err(err, "delete subscription")
}
