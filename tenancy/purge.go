package tenancy

import (
	"context"
	"errors"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/blob"
)

// purgeBatch is how many files a purge step removes.
const purgeBatch = 500

// PurgeDeleted removes a batch of each deleted tenant's data (its blobs, then its
// rows), resuming where a crash or the previous step left off; the tenant row goes
// last. Run calls it at every reload.
func (rt *Runtime) PurgeDeleted(ctx context.Context) {
	for id, t := range *rt.tenants.Load() {
		if t.State != coffer.TenantDeleting {
			continue
		}
		err := rt.PurgeStep(ctx, t)
		switch c := coffer.ErrorCode(err); {
		case err == nil || ctx.Err() != nil:
		case c == coffer.ENOTFOUND || c == coffer.EPRECONDITION:
			rt.kick() // another node finished it, or the id is a new tenant's: the next reload forgets it
		default:
			rt.deps.Log.Warn("removing a deleted tenant's data failed; retrying", "tenant", id, "err", err)
		}
	}
}

// PurgeStep removes a batch of t's blobs, or once its blob store is empty, a batch
// of its rows (and the blobs they name, written since). The blobs go while t's row
// is still there, so never after a new tenant has taken its id (CreateTenant refuses
// an id being deleted): a purge cannot remove the blobs of the id's next tenant,
// even from a node whose row of t is stale.
func (rt *Runtime) PurgeStep(ctx context.Context, t *coffer.Tenant) error {
	cfg, err := rt.settings(t)
	if err != nil {
		return err
	}
	blobs, err := rt.Blobs(ctx, t, cfg.Storage)
	if err != nil {
		return err
	}
	defer blobs.Close()
	if more, err := rt.sweepDeleted(ctx, t, blobs); err != nil || more {
		return err
	}
	keys, done, err := rt.reg.PurgeTenant(ctx, t.ID, purgeBatch)
	if err != nil {
		return err
	}
	for _, k := range keys {
		if err := blobs.Delete(ctx, k); err != nil {
			return err // an orphan now: the next step's sweep removes it
		}
	}
	if !done {
		return nil
	}
	rt.deps.Log.Info("tenant deleted", "tenant", t.ID)
	rt.DropEverywhere(ctx, t.ID)
	return rt.Reload(ctx)
}

// errBatchListed stops sweepDeleted's listing at a full batch.
var errBatchListed = errors.New("a batch listed")

// sweepDeleted deletes up to purgeBatch blobs from the store of t, a tenant being
// deleted (every blob: those of its rows, image variants, orphans), and reports
// whether more may be left. It lists first and deletes only if t's row is still
// there afterwards: every key listed is then t's, not a later tenant's of its id.
func (rt *Runtime) sweepDeleted(ctx context.Context, t *coffer.Tenant, blobs *blob.Store) (more bool, err error) {
	var keys []string
	err = blobs.List(ctx, "", func(a blob.Attrs) error {
		if keys = append(keys, a.Key); len(keys) == purgeBatch {
			return errBatchListed
		}
		return nil
	})
	if err != nil && !errors.Is(err, errBatchListed) || len(keys) == 0 {
		return false, err
	}
	cur, err := rt.reg.GetTenant(ctx, t.ID)
	if err != nil || !cur.CreatedAt.Equal(t.CreatedAt) || cur.State != coffer.TenantDeleting {
		return false, err // gone (purged by another node) or another tenant's now: not ours to sweep
	}
	for _, k := range keys {
		if err := blobs.Delete(ctx, k); err != nil {
			return false, err
		}
	}
	return len(keys) == purgeBatch, nil
}
