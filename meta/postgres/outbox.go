package postgres

import (
	"context"
	"time"

	"github.com/coffer/coffer/meta"
	"github.com/coffer/coffer/meta/internal/sqlcore"
)

// redeliver makes a delivery pending again unless its lease runs (see
// sqlcore.Dialect.Redeliver), in one statement that locks the row.
func redeliver(ctx context.Context, db sqlcore.DB, tenant, subID string, id int64, now time.Time) (leased bool, err error) {
	err = db.QueryRow(ctx, `WITH d AS (SELECT id, claimed AND next_at > $1 AS leased FROM webhook_deliveries
			WHERE id = $2 AND tenant_id = $4 AND subscription_id = $3 FOR UPDATE),
		u AS (UPDATE webhook_deliveries w SET state = 'pending', attempts = 0, claimed = false, last_status = 0,
			last_error = '', next_at = $1, updated_at = $1 FROM d WHERE w.id = d.id AND NOT d.leased)
		SELECT leased FROM d`, now, id, subID, tenant).Scan(&leased)
	return leased, err
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

// claim leases up to limit due deliveries in one statement on the pool.
func claim(ctx context.Context, db sqlcore.DB, now, leaseUntil time.Time, limit int) ([]*meta.Claim, error) {
	rows, err := db.Query(ctx, claimSQL, now, leaseUntil, limit)
	return sqlcore.Collect(rows, err, sqlcore.ScanClaim)
}
