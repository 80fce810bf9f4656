package app

import (
	"context"
	"encoding/json"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/meta"
	"github.com/coffer/coffer/rpcapi"
	"github.com/coffer/coffer/site"
	"github.com/coffer/coffer/site/audit"
)

// siteAdmin manages one tenant's sites (rpcapi.SiteAdmin): sites are checked and
// compiled before they are stored, their secrets sealed, and answers carry no
// secret. A change is live on this node at once and on the others within the
// invalidation latency (NOTIFY "s:<tenant>"; the refresh interval at worst).
type siteAdmin struct {
	st     *sites
	tenant string
}

// store returns the tenant's view of the sites table.
func (a siteAdmin) store() (meta.Sites, error) {
	t, ok := a.st.s.st.base.(meta.Tenanted)
	if !ok {
		return nil, coffer.Errorf(coffer.EUNAVAILABLE, "sites need a metadata store with tenants")
	}
	s, ok := t.ForTenant(a.tenant).(meta.Sites)
	if !ok {
		return nil, coffer.Errorf(coffer.EUNAVAILABLE, "the metadata store cannot keep sites")
	}
	return s, nil
}

// prepare validates s (normalizing it), keeps old's secrets where the update
// omits them (old is nil for a new site), checks that it compiles (origins
// included) and that its hosts are not tenants' hosts, and seals its secrets: the
// document to store.
func (a siteAdmin) prepare(s *site.Site, old *site.Site) ([]byte, error) {
	if s == nil {
		return nil, coffer.InvalidField("site", "a site is required")
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if err := s.KeepSecrets(old); err != nil {
		return nil, err
	}
	if hasSecrets(s) && a.st.sealer == nil {
		return nil, coffer.Errorf(coffer.EINVALID, "site secrets (s3.secretAccessKey, purgeWebhooks.secret) need the server's --tenant-key to be sealed")
	}
	if a.st.sealer != nil {
		if err := s.Prepare(a.st.sealer, a.tenant); err != nil {
			return nil, err
		}
	}
	if err := a.checkHosts(s.Hosts); err != nil {
		return nil, err
	}
	if _, err := site.Compile(s, a.tenant, originFactory{st: a.st, site: s.ID}); err != nil {
		return nil, err
	}
	return json.Marshal(s)
}

// hasSecrets reports whether s holds a secret (an S3 origin's key, a purge
// webhook's), which only a server with --tenant-key can seal.
func hasSecrets(s *site.Site) bool {
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
func answer(row *coffer.Site) (*site.Site, error) {
	s, err := site.Parse(row.Doc)
	if err != nil {
		return nil, coffer.Internal(err, "stored site")
	}
	r := s.Redacted()
	r.CreatedAt, r.UpdatedAt = row.CreatedAt, row.UpdatedAt
	return r, nil
}

// CreateSite stores a new site.
func (a siteAdmin) CreateSite(ctx context.Context, s *site.Site) (*site.Site, error) {
	store, err := a.store()
	if err != nil {
		return nil, err
	}
	stored, err := a.prepare(s, nil)
	if err != nil {
		return nil, err
	}
	row := &coffer.Site{TenantID: a.tenant, ID: s.ID, Hosts: s.Hosts, Doc: stored}
	if err := store.CreateSite(ctx, row); err != nil {
		return nil, err
	}
	a.st.reloadNow(ctx)
	return answer(row)
}

// GetSite returns one site.
func (a siteAdmin) GetSite(ctx context.Context, id string) (*site.Site, error) {
	store, err := a.store()
	if err != nil {
		return nil, err
	}
	row, err := store.GetSite(ctx, id)
	if err != nil {
		return nil, err
	}
	return answer(row)
}

// ListSites returns every site of the tenant.
func (a siteAdmin) ListSites(ctx context.Context) ([]*site.Site, error) {
	store, err := a.store()
	if err != nil {
		return nil, err
	}
	rows, err := store.ListSites(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]*site.Site, 0, len(rows))
	for _, row := range rows {
		r, err := answer(row)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// UpdateSite replaces a site (its id must stay); the site's cached objects are
// purged, since routes may now map paths elsewhere.
func (a siteAdmin) UpdateSite(ctx context.Context, id string, s *site.Site) (*site.Site, error) {
	store, err := a.store()
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
	a.st.reloadNow(ctx)
	a.st.purge(ctx, a.tenant, id, site.Purge{}, true)
	return answer(row)
}

// DeleteSite removes a site and purges its cached objects.
func (a siteAdmin) DeleteSite(ctx context.Context, id string) error {
	store, err := a.store()
	if err != nil {
		return err
	}
	if err := store.DeleteSite(ctx, id); err != nil {
		return err
	}
	a.st.purge(ctx, a.tenant, id, site.Purge{}, true)
	a.st.reloadNow(ctx)
	return nil
}

// PurgeSite drops what p names from the site's cached objects, on every node.
func (a siteAdmin) PurgeSite(ctx context.Context, id string, p site.Purge) (int, bool, error) {
	if a.st.entry(a.tenant, id) == nil {
		if _, err := a.GetSite(ctx, id); err != nil {
			return 0, false, err
		}
	}
	n, told := a.st.purge(ctx, a.tenant, id, p, true)
	return n, told, nil
}

// reloadNow reads the sites again before answering, so the change is live on this
// node when the caller hears back (a failure is logged; the refresher retries).
func (st *sites) reloadNow(ctx context.Context) {
	if err := st.reload(ctx); err != nil {
		st.log.Warn("reading the sites failed; retrying", "err", err)
		st.changed()
	}
}

// SiteStats returns what this node served for the site since it started.
func (a siteAdmin) SiteStats(ctx context.Context, id string) (rpcapi.SiteStats, error) {
	if a.st.entry(a.tenant, id) == nil {
		if _, err := a.GetSite(ctx, id); err != nil {
			return rpcapi.SiteStats{}, err
		}
	}
	s := a.st.handler.Stats(a.tenant + "/" + id)
	out := rpcapi.SiteStats{Requests: s.Requests.Load(), Bytes: s.Bytes.Load(), Hits: s.Hits.Load(), Misses: s.Misses.Load(),
		Stale: s.Stale.Load(), Revalidated: s.Revalidated.Load()}
	out.Bypass = max(0, out.Requests-out.Hits-out.Misses-out.Stale-out.Revalidated)
	return out, nil
}

// auditQuerier answers AuditService from this node's audit log (rpcapi.AuditQuerier).
type auditQuerier struct{ st *sites }

// QueryAudit implements rpcapi.AuditQuerier.
func (q auditQuerier) QueryAudit(ctx context.Context, tenant string, f rpcapi.AuditFilter) ([]audit.Record, error) {
	if q.st.audit == nil {
		return nil, coffer.Errorf(coffer.EUNAVAILABLE, "the audit log is off on this server (--audit-dir -)")
	}
	return q.st.audit.Query(ctx, audit.Filter{Tenant: tenant, Site: f.Site, Host: f.Host, Since: f.Since, Until: f.Until,
		Path: f.Path, Status: f.Status, Cache: f.Cache, Limit: f.Limit})
}
