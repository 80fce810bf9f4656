package service

import (
	"context"
	"encoding/json"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/meta"
	"github.com/coffer/coffer/site"
	"github.com/coffer/coffer/tenant"
)

// SiteAdmin is the site use cases of one tenant's admin: sites are validated and
// compiled before they are stored, their secrets sealed, and answers carry no
// secret (site.Document.Redacted). Sites cross it as *site.Document, never wire bytes. A
// change is live on this node at once and on the others through the sites
// runtime. It checks no credentials: its callers admit only the tenant's admin.
type SiteAdmin struct {
	Tenant  string         // the tenant whose sites it manages ("" the default tenant)
	Sealer  *tenant.Sealer // seals the sites' secrets; nil: sites with secrets are refused
	Runtime SiteRuntime
}

// SiteRuntime is what the site use cases need of the sites runtime that serves the
// sites (package sites implements it).
type SiteRuntime interface {
	// Store returns tenant's view of the sites table; EUNAVAILABLE if the metadata
	// store cannot keep sites.
	Store(tenant string) (meta.Sites, error)
	// CheckHosts returns ECONFLICT (naming the host) for a host that is reserved,
	// which no site may take.
	CheckHosts(hosts []string) error
	// Compile checks that tenant's site s compiles, its origins included.
	Compile(tenant string, s *site.Document) error
	// Reload reads the sites again, so a change is live on this node when the
	// caller hears back (a failure is the runtime's to log and retry).
	Reload(ctx context.Context)
	// Purge drops what p names from tenant's site id's cached objects on this node
	// and tells the other nodes and the site's purge webhooks: the entries removed
	// here and whether other nodes were told.
	Purge(ctx context.Context, tenant, id string, p site.Purge) (removed int, broadcast bool)
	// Serves reports whether this node serves tenant's site id now.
	Serves(tenant, id string) bool
	// Stats returns what this node served for tenant's site id since it started.
	Stats(tenant, id string) SiteStats
}

// SiteStats are a site's counters on one node: requests and body bytes, and the
// requests by cache outcome (audit.Record's Cache).
type SiteStats struct {
	Requests, Bytes                          int64
	Hits, Misses, Stale, Revalidated, Bypass int64
}

// prepare validates s (normalizing it), keeps old's secrets where the update
// omits them (old is nil for a new site), checks that it compiles (origins
// included) and that its hosts are not reserved, and seals its secrets: the
// document to store.
func (a SiteAdmin) prepare(s *site.Document, old *site.Document) ([]byte, error) {
	if s == nil {
		return nil, coffer.InvalidField("site", "a site is required")
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if err := s.KeepSecrets(old); err != nil {
		return nil, err
	}
	if hasSecrets(s) && a.Sealer == nil {
		return nil, coffer.Errorf(coffer.EINVALID, "site secrets (s3.secretAccessKey, purgeWebhooks.secret) need the server's --tenant-key to be sealed")
	}
	if a.Sealer != nil {
		if err := s.Prepare(a.Sealer, a.Tenant); err != nil {
			return nil, err
		}
	}
	if err := a.Runtime.CheckHosts(s.Hosts); err != nil {
		return nil, err
	}
	if err := a.Runtime.Compile(a.Tenant, s); err != nil {
		return nil, err
	}
	return json.Marshal(s)
}

// hasSecrets reports whether s holds a secret (an S3 origin's key, a purge
// webhook's), which only a server with --tenant-key can seal.
func hasSecrets(s *site.Document) bool {
	for _, r := range s.Routes {
		if r.Target.S3 != nil && r.Target.S3.SecretAccessKey != "" {
			return true
		}
	}
	for _, h := range s.PurgeWebhooks {
		if h.Secret != "" {
			return true
		}
	}
	return false
}

// answer is a stored site as answers show it: redacted, with the store's times.
func answer(row *coffer.Site) (*site.Document, error) {
	s, err := site.Parse(row.Doc)
	if err != nil {
		return nil, coffer.Internal(err, "stored site")
	}
	r := s.Redacted()
	r.CreatedAt, r.UpdatedAt = row.CreatedAt, row.UpdatedAt
	return r, nil
}

// CreateSite stores s (which it normalizes and seals) and returns it as stored.
// ECONFLICT if the id or a host is taken (naming it); EINVALID for a bad site
// (the field named: "hosts[0]", "routes[2].target.http.url").
func (a SiteAdmin) CreateSite(ctx context.Context, s *site.Document) (*site.Document, error) {
	store, err := a.Runtime.Store(a.Tenant)
	if err != nil {
		return nil, err
	}
	stored, err := a.prepare(s, nil)
	if err != nil {
		return nil, err
	}
	row := &coffer.Site{TenantID: a.Tenant, ID: s.ID, Hosts: s.Hosts, Doc: stored}
	if err := store.CreateSite(ctx, row); err != nil {
		return nil, err
	}
	a.Runtime.Reload(ctx)
	return answer(row)
}

// GetSite returns one site; ENOTFOUND if the tenant has no such site.
func (a SiteAdmin) GetSite(ctx context.Context, id string) (*site.Document, error) {
	store, err := a.Runtime.Store(a.Tenant)
	if err != nil {
		return nil, err
	}
	row, err := store.GetSite(ctx, id)
	if err != nil {
		return nil, err
	}
	return answer(row)
}

// ListSites returns every site of the tenant, ordered by id.
func (a SiteAdmin) ListSites(ctx context.Context) ([]*site.Document, error) {
	store, err := a.Runtime.Store(a.Tenant)
	if err != nil {
		return nil, err
	}
	rows, err := store.ListSites(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]*site.Document, 0, len(rows))
	for _, row := range rows {
		r, err := answer(row)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// UpdateSite replaces site id with s (its id must stay) and returns it as stored;
// the site's cached objects are purged, since routes may now map paths elsewhere.
// ENOTFOUND if missing; ECONFLICT and EINVALID as CreateSite.
func (a SiteAdmin) UpdateSite(ctx context.Context, id string, s *site.Document) (*site.Document, error) {
	store, err := a.Runtime.Store(a.Tenant)
	if err != nil {
		return nil, err
	}
	oldRow, err := store.GetSite(ctx, id)
	if err != nil {
		return nil, err
	}
	old, err := site.Parse(oldRow.Doc)
	if err != nil {
		return nil, coffer.Internal(err, "stored site")
	}
	stored, err := a.prepare(s, old)
	if err != nil {
		return nil, err
	}
	if s.ID != id {
		return nil, coffer.InvalidField("id", "id: a site's id cannot change (it is "+id+")")
	}
	row, err := store.UpdateSite(ctx, id, s.Hosts, stored)
	if err != nil {
		return nil, err
	}
	a.Runtime.Reload(ctx)
	a.Runtime.Purge(ctx, a.Tenant, id, site.Purge{})
	return answer(row)
}

// DeleteSite removes a site and purges its cached objects; ENOTFOUND if missing.
func (a SiteAdmin) DeleteSite(ctx context.Context, id string) error {
	store, err := a.Runtime.Store(a.Tenant)
	if err != nil {
		return err
	}
	if err := store.DeleteSite(ctx, id); err != nil {
		return err
	}
	a.Runtime.Purge(ctx, a.Tenant, id, site.Purge{})
	a.Runtime.Reload(ctx)
	return nil
}

// exists returns ENOTFOUND unless the site is served here or stored.
func (a SiteAdmin) exists(ctx context.Context, id string) error {
	if a.Runtime.Serves(a.Tenant, id) {
		return nil
	}
	_, err := a.GetSite(ctx, id)
	return err
}

// PurgeSite drops what p names from the site's cached objects, on every node.
// ENOTFOUND if the site is missing.
func (a SiteAdmin) PurgeSite(ctx context.Context, id string, p site.Purge) (int, bool, error) {
	if err := a.exists(ctx, id); err != nil {
		return 0, false, err
	}
	n, told := a.Runtime.Purge(ctx, a.Tenant, id, p)
	return n, told, nil
}

// SiteStats returns what this node served for the site since it started.
// ENOTFOUND if the site is missing.
func (a SiteAdmin) SiteStats(ctx context.Context, id string) (SiteStats, error) {
	if err := a.exists(ctx, id); err != nil {
		return SiteStats{}, err
	}
	return a.Runtime.Stats(a.Tenant, id), nil
}
