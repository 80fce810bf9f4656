package postgres

import (
	"context"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/meta"
)

// invalidateChannel is the channel the invalidation triggers send on (cache.Channel,
// which the store cannot import).
const invalidateChannel = "coffer_invalidate"

var _ meta.Notifier = (*Store)(nil)

// Notify sends payload on the invalidation channel (see meta.Notifier): every node's
// listener receives it once the statement commits, next to the triggers' payloads.
// EINVALID for a payload longer than meta.MaxNotifyPayload bytes or holding a NUL
// (text PostgreSQL cannot carry).
func (s *Store) Notify(ctx context.Context, payload string) error {
	if len(payload) > meta.MaxNotifyPayload {
		return coffer.Errorf(coffer.EINVALID, "notification payload of %d bytes (at most %d)",
			len(payload), meta.MaxNotifyPayload)
	}
	_, err := s.pool.Exec(ctx, `SELECT pg_notify($1, $2)`, invalidateChannel, payload)
	return newDialect().Err(err, "notify")
}
