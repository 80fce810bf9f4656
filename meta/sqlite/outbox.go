package sqlite

import (
	"context"
	"strings"
	"time"

	"github.com/coffer/coffer/meta"
	"github.com/coffer/coffer/meta/internal/sqlcore"
)

// redeliver makes a delivery pending again unless its lease runs (see
// sqlcore.Dialect.Redeliver).
func redeliver(ctx context.Context, db sqlcore.DB, tenant, subID string, id int64, now time.Time) (leased bool, err error) {
	err = db.Tx(ctx, func(tx sqlcore.Querier) error {
		err := tx.QueryRow(ctx, `SELECT claimed = 1 AND next_at > ? FROM webhook_deliveries
			WHERE id = ? AND tenant_id = ? AND subscription_id = ?`, now.UnixMicro(), id, tenant, subID).Scan(&leased)
		if err != nil || leased {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE webhook_deliveries SET state = 'pending', attempts = 0, claimed = 0,
			last_status = 0, last_error = '', next_at = ?, updated_at = ? WHERE id = ?`, now.UnixMicro(), now.UnixMicro(), id)
		return err
	})
	return leased, err
}

// claim leases up to limit due deliveries. SQLite has one writer at a time, so
// selecting and updating inside one write transaction is enough.
func claim(ctx context.Context, db sqlcore.DB, now, leaseUntil time.Time, limit int) ([]*meta.Claim, error) {
	var out []*meta.Claim
	err := db.Tx(ctx, func(tx sqlcore.Querier) error {
		var err error
		out, err = selectDue(ctx, tx, now, limit)
		if err != nil || len(out) == 0 {
			return err
		}
		ids := make([]any, 0, len(out)+2)
		ids = append(ids, leaseUntil.UnixMicro(), now.UnixMicro())
		for _, c := range out {
			c.Token++
			c.Delivery.Attempts++
			c.Delivery.NextAttemptAt = time.UnixMicro(leaseUntil.UnixMicro()).UTC()
			c.Delivery.UpdatedAt = time.UnixMicro(now.UnixMicro()).UTC()
			ids = append(ids, c.Delivery.ID)
		}
		_, err = tx.Exec(ctx, `UPDATE webhook_deliveries SET attempts = attempts + 1, next_at = ?,
			updated_at = ?, claimed = 1, claims = claims + 1 WHERE id IN (?`+strings.Repeat(", ?", len(out)-1)+`)`, ids...)
		return err
	})
	return out, err
}

// selectDue reads up to limit due deliveries with what an attempt needs.
func selectDue(ctx context.Context, tx sqlcore.Querier, now time.Time, limit int) ([]*meta.Claim, error) {
	rows, err := tx.Query(ctx, `SELECT d.id, d.subscription_id, d.event_id, d.event_type, d.state,
		d.attempts, d.next_at, d.last_status, d.last_error, d.created_at, d.updated_at, s.url, s.secret, e.payload, d.claims
		FROM webhook_deliveries d JOIN webhook_subscriptions s ON s.id = d.subscription_id
		JOIN webhook_events e ON e.id = d.event_id
		WHERE d.state = 'pending' AND d.next_at <= ? ORDER BY d.next_at, d.id LIMIT ?`, now.UnixMicro(), limit)
	return sqlcore.Collect(rows, err, sqlcore.ScanClaim)
}
