package tenancy

import (
	"context"
	"strings"
	"sync/atomic"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/meta"
	"github.com/coffer/coffer/service"
	"github.com/coffer/coffer/tenant"
)

// Admin returns the tenant use cases (the management API's TenantService) over
// the tenant registry, with rt as their runtime.
func (rt *Runtime) Admin() service.TenantAdmin {
	return service.TenantAdmin{Registry: rt.reg, Sealer: rt.sealer, Runtime: rt}
}

// servedCounts is what this node served one tenant since it started.
type servedCounts struct {
	requests atomic.Int64
	bytes    atomic.Int64 // response bodies: their Content-Length (not HEAD's), or the fast path's bytes
}

// served returns tenant id's counts.
func (rt *Runtime) served(id string) *servedCounts {
	if c, ok := rt.counts.Load(id); ok {
		return c.(*servedCounts)
	}
	c, _ := rt.counts.LoadOrStore(id, &servedCounts{})
	return c.(*servedCounts)
}

// Served implements service.TenantRuntime.
func (rt *Runtime) Served(id string) (requests, bytes int64) {
	c := rt.served(id)
	return c.requests.Load(), c.bytes.Load()
}

// DefaultHosts implements service.TenantRuntime: the default tenant's hosts,
// normalized.
func (rt *Runtime) DefaultHosts() []string { return rt.defHosts }

// StoredUsage implements service.TenantRuntime.
func (rt *Runtime) StoredUsage(ctx context.Context, id string) (coffer.Usage, error) {
	tenanted, _ := rt.deps.Store.(meta.Tenanted)
	var u meta.Usage
	if tenanted != nil {
		u, _ = tenanted.ForTenant(id).(meta.Usage)
	}
	if u == nil {
		return coffer.Usage{}, coffer.Errorf(coffer.ENOTIMPLEMENTED, "the metadata store keeps no usage")
	}
	return u.Usage(ctx)
}

// CheckTenantNames implements service.TenantRuntime: it refuses (ECONFLICT) a new
// tenant id whose names under the tenant wildcards a site has (possible only if a
// wildcard was added after the site was made): the site would lose them at once.
func (rt *Runtime) CheckTenantNames(ctx context.Context, id string) error {
	if rt.deps.SiteHost == nil {
		return nil
	}
	var names []string
	for _, w := range rt.cfg.Wildcards {
		if h, err := tenant.NormalizeHost(id + "." + strings.TrimPrefix(w, "*.")); err == nil {
			names = append(names, h)
		}
	}
	h, err := rt.deps.SiteHost(ctx, names)
	if err != nil || h == "" {
		return err
	}
	return coffer.Errorf(coffer.ECONFLICT, "tenant %q would be reached as %q, which belongs to a site", id, h)
}
