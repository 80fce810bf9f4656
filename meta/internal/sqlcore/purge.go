package sqlcore

import (
	"context"
	"slices"
	"strings"

	"github.com/coffer/coffer"
)

// PurgeTenant removes a batch of tenant id's data (see meta.Tenants): up to limit
// file rows, up to limit upload intents and up to limit rejections, in one
// transaction, returning the blob keys of the files and intents removed; once none of
// those is left, the rest (buckets, rules, subscriptions with their deliveries and
// events, usage, sites with their hosts, hosts, the tenant row) in one more, reporting done. Every batch
// commits on its own, so a crash at any point loses at most the blob keys of one
// batch (orphans, which the sweeper finds) and a later call carries on. Deleting files
// sends no webhook event: the tenant is going away. The usage trigger keeps the
// tenant's usage exact all along.
func (s *Store) PurgeTenant(ctx context.Context, id string, limit int) (blobKeys []string, done bool, err error) {
	if err := checkTenantID(id); err != nil {
		return nil, false, err
	}
	limit = max(limit, 1)
	t := s.forTenant(id)
	err = s.write(ctx, "purge tenant", func(tx Querier) error {
		blobKeys, done = nil, false // a DB may retry fn
		var state string
		err := tx.QueryRow(ctx, `SELECT state FROM tenants WHERE id = ?`, id).Scan(&state)
		switch {
		case IsNoRows(err):
			return tenantNotFound(id)
		case err != nil:
			return err
		case state != string(coffer.TenantDeleting):
			return coffer.Errorf(coffer.EPRECONDITION, "tenant %q is not being deleted (state %s)", id, state)
		}
		if blobKeys, err = t.purgeBatch(ctx, tx, limit); err != nil || len(blobKeys) > 0 {
			return err
		}
		var left bool
		if left, err = t.purgeRejections(ctx, tx, limit); err != nil || left {
			return err
		}
		done = true
		return t.purgeRest(ctx, tx)
	})
	if err != nil {
		return nil, false, err
	}
	return blobKeys, done, nil
}

// purgeBatch deletes up to limit of the tenant's files with the intents of their blob
// keys, then up to limit of its intents no file refers to, and returns their blob keys, each once:
// a key is returned by the one call that removes its last reference.
func (s *Store) purgeBatch(ctx context.Context, tx Querier, limit int) ([]string, error) {
	scanKey := func(r Row) (k string, err error) { return k, r.Scan(&k) }
	rows, err := tx.Query(ctx, `DELETE FROM files WHERE tenant_id = ? AND id IN
		(SELECT id FROM files WHERE tenant_id = ? ORDER BY id LIMIT ?) RETURNING blob_key`,
		s.tenant, s.tenant, limit)
	keys, err := Collect(rows, err, scanKey)
	if err != nil {
		return nil, err
	}
	if len(keys) > 0 {
		args := make([]any, 0, len(keys)+1)
		args = append(args, s.tenant)
		for _, k := range keys {
			args = append(args, k)
		}
		_, err = tx.Exec(ctx, `DELETE FROM upload_intents WHERE tenant_id = ? AND blob_key IN (?`+
			strings.Repeat(", ?", len(keys)-1)+`)`, args...)
		if err != nil {
			return nil, err
		}
	}
	rows, err = tx.Query(ctx, `DELETE FROM upload_intents WHERE tenant_id = ? AND blob_key IN
		(SELECT blob_key FROM upload_intents i WHERE tenant_id = ? AND NOT EXISTS
			(SELECT 1 FROM files f WHERE f.tenant_id = i.tenant_id AND f.blob_key = i.blob_key)
		ORDER BY blob_key LIMIT ?) RETURNING blob_key`,
		s.tenant, s.tenant, limit)
	intents, err := Collect(rows, err, scanKey)
	keys = append(keys, intents...)
	slices.Sort(keys)
	return slices.Compact(keys), err
}

// purgeRejections deletes up to limit of the tenant's rejections and reports whether
// it deleted any (so that some may be left).
func (s *Store) purgeRejections(ctx context.Context, tx Querier, limit int) (bool, error) {
	n, err := tx.Exec(ctx, `DELETE FROM upload_rejections WHERE tenant_id = ? AND id IN
		(SELECT id FROM upload_rejections WHERE tenant_id = ? ORDER BY id LIMIT ?)`, s.tenant, s.tenant, limit)
	return n > 0, err
}

// purgeRest deletes what is left of the tenant once it has no file, intent or
// rejection: deliveries, events, subscriptions, buckets, rules, usage, sites with their
// hosts, and the tenant with its hosts.
func (s *Store) purgeRest(ctx context.Context, tx Querier) error {
	for _, q := range []string{
		`DELETE FROM webhook_deliveries WHERE tenant_id = ?`,
		`DELETE FROM webhook_events WHERE tenant_id = ?`,
		`DELETE FROM webhook_subscriptions WHERE tenant_id = ?`,
		`DELETE FROM buckets WHERE tenant_id = ?`,
		`DELETE FROM rules WHERE tenant_id = ?`,
		`DELETE FROM tenant_usage WHERE tenant_id = ?`,
		`DELETE FROM site_hosts WHERE tenant_id = ?`,
		`DELETE FROM sites WHERE tenant_id = ?`,
		`DELETE FROM tenant_hosts WHERE tenant_id = ?`,
		`DELETE FROM tenants WHERE id = ?`,
	} {
		if _, err := tx.Exec(ctx, q, s.tenant); err != nil {
			return err
		}
	}
	return nil
}
