package meta

import (
	"context"

	"github.com/coffer/coffer"
)

// Tenanted is a store shared by many tenants (both SQL stores are). Every row it
// holds carries its tenant, and ForTenant returns the view of one tenant: every
// method of the view (Store, and Outbox, Rejections, Usage and Sites where the
// store implements them) reads and writes that tenant's rows only, so a tenant's
// requests cannot reach another's data even by naming its ids; another tenant's row answers
// as a missing one does (ENOTFOUND), and bucket ids, file ids, upload intents' blob
// keys, rules and named files are unique per tenant only. Subscription and rejection
// ids stay unique across tenants (the server makes them, random): creating one with an
// id another tenant has is ECONFLICT. ForTenant(coffer.DefaultTenantID) is the store as
// it was before tenants: the rows of a deployment with no tenants (the shared store's
// own methods are that view's). A view's Close does nothing (the shared store owns the
// connections); its Ping pings them. A view offers meta.Outbox, meta.Rejections,
// Usage and Sites where the store does, and never Tenants or SiteRegistry.
//
// Outbox's ClaimDeliveries, FinishDelivery, ReleaseClaims and Prune work across
// tenants on any view (the dispatcher is one per node); every other method is scoped.
type Tenanted interface {
	ForTenant(id string) Store
}

// Tenants is the registry of tenants, kept in the metadata database so that every
// node sees the same tenants. Host names are unique across tenants and sites.
type Tenants interface {
	// CreateTenant stores t (ID, Hosts, Settings, Quota set by the caller; State
	// active when empty), setting CreatedAt/UpdatedAt, Hosts sorted without repeats,
	// and creates the tenant's default bucket in the same transaction: a new tenant
	// starts as a new deployment does. ECONFLICT if the id or one of its hosts is
	// taken by another tenant or a site (meta.Sites; naming the host), EINVALID for
	// the default tenant's id. The store does not check the syntax of ids and hosts
	// (package tenant does).
	CreateTenant(ctx context.Context, t *coffer.Tenant) error
	// GetTenant returns ENOTFOUND if there is no such tenant.
	GetTenant(ctx context.Context, id string) (*coffer.Tenant, error)
	// ListTenants returns every tenant ordered by id.
	ListTenants(ctx context.Context) ([]*coffer.Tenant, error)
	// UpdateTenant applies u and bumps UpdatedAt; ENOTFOUND if missing, ECONFLICT if
	// a new host is another tenant's or a site's.
	UpdateTenant(ctx context.Context, id string, u coffer.TenantUpdate) (*coffer.Tenant, error)
	// PurgeTenant removes a batch of tenant id's data in one transaction: up to limit
	// files (with the intents of their blob keys), up to limit other intents, and,
	// once none is left, up to limit rejections; it returns the blob keys of the files
	// and intents removed, each once (by the call that removes its last reference),
	// for the caller to delete. When the tenant has none of those left it removes the
	// rest (buckets, rules, webhooks with their events and deliveries, usage, sites
	// with their hosts, hosts, the tenant row) and reports done. No webhook event is written. It is safe to call
	// again after a crash at any point; blobs of rows already removed are orphans the
	// sweeper finds. ENOTFOUND if there is no such tenant; EPRECONDITION, changing
	// nothing, unless the tenant's state is deleting (checked in the transaction, so a
	// purge that outlives its tenant never removes the data of a new tenant given the
	// same id); EINVALID for the default tenant.
	PurgeTenant(ctx context.Context, id string, limit int) (blobKeys []string, done bool, err error)
}

// Usage is a tenant view's stored usage, kept exactly in the transaction of every
// change to an uploaded file (whichever method makes it, PurgeTenant included). A
// change that would take the tenant past its quota (coffer.Quota, from its Tenants
// row; the default tenant and a 0 have none) fails with EQUOTA ("tenant storage quota
// exceeded: the change would store N of M bytes") and changes nothing, so concurrent
// uploads cannot overshoot it. A change that shrinks the usage always passes, even
// over a quota lowered since.
type Usage interface {
	Usage(ctx context.Context) (coffer.Usage, error)
}
