package sites

import (
	"context"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/meta"
	"github.com/coffer/coffer/service"
	"github.com/coffer/coffer/site"
	"github.com/coffer/coffer/site/audit"
)

// Admin returns the site use cases of tenant's admin (the management API's
// SiteService): service.SiteAdmin over this runtime. A change is live on this node
// at once and on the others within the invalidation latency (a bus event; the
// refresh interval at worst).
func (st *Runtime) Admin(tenant string) service.SiteAdmin {
	return service.SiteAdmin{Tenant: tenant, Sealer: st.opt.Sealer, Runtime: siteRuntime{st}}
}

var _ service.SiteRuntime = siteRuntime{}

// siteRuntime is the sites runtime as the site use cases see it.
type siteRuntime struct{ st *Runtime }

// Store implements service.SiteRuntime.
func (r siteRuntime) Store(tenant string) (meta.Sites, error) {
	t, ok := r.st.opt.Store.(meta.Tenanted)
	if !ok {
		return nil, coffer.Errorf(coffer.EUNAVAILABLE, "sites need a metadata store with tenants")
	}
	s, ok := t.ForTenant(tenant).(meta.Sites)
	if !ok {
		return nil, coffer.Errorf(coffer.EUNAVAILABLE, "the metadata store cannot keep sites")
	}
	return s, nil
}

// CheckHosts implements service.SiteRuntime.
func (r siteRuntime) CheckHosts(hosts []string) error { return r.st.checkHosts(hosts) }

// Compile implements service.SiteRuntime.
func (r siteRuntime) Compile(tenant string, s *site.Document) error {
	_, err := site.Compile(s, tenant, originFactory{st: r.st, site: s.ID})
	return err
}

// Reload implements service.SiteRuntime.
func (r siteRuntime) Reload(ctx context.Context) { r.st.reloadNow(ctx) }

// Purge implements service.SiteRuntime: a change made here (origin).
func (r siteRuntime) Purge(ctx context.Context, tenant, id string, p site.Purge) (int, bool) {
	return r.st.purge(ctx, tenant, id, p, true)
}

// Serves implements service.SiteRuntime.
func (r siteRuntime) Serves(tenant, id string) bool { return r.st.entry(tenant, id) != nil }

// Stats implements service.SiteRuntime.
func (r siteRuntime) Stats(tenant, id string) service.SiteStats {
	s := r.st.handler.Stats(tenant + "/" + id)
	out := service.SiteStats{Requests: s.Requests.Load(), Bytes: s.Bytes.Load(), Hits: s.Hits.Load(), Misses: s.Misses.Load(),
		Stale: s.Stale.Load(), Revalidated: s.Revalidated.Load()}
	out.Bypass = max(0, out.Requests-out.Hits-out.Misses-out.Stale-out.Revalidated)
	return out
}

// reloadNow reads the sites again before answering, so the change is live on this
// node when the caller hears back (a failure is logged; the refresher retries).
func (st *Runtime) reloadNow(ctx context.Context) {
	if err := st.reload(ctx); err != nil {
		st.log.Warn("reading the sites failed; retrying", "err", err)
		st.Changed()
	}
}

var _ service.AuditLog = (*Runtime)(nil)

// QueryAudit implements service.AuditLog over this node's audit log.
func (st *Runtime) QueryAudit(ctx context.Context, f audit.Filter) ([]audit.Record, error) {
	if st.audit == nil {
		return nil, coffer.Errorf(coffer.EUNAVAILABLE, "the audit log is off on this server (--audit-dir -)")
	}
	return st.audit.Query(ctx, f)
}
