package app

import (
	"context"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/meta"
	"github.com/coffer/coffer/rpcapi"
	"github.com/coffer/coffer/service"
)

// tenantAdmin is the management API's TenantService: service.TenantAdmin over the
// tenant registry, with this server's tenancy runtime.
func tenantAdmin(tn *tenancy) service.TenantAdmin {
	return service.TenantAdmin{Registry: tn.reg, Sealer: tn.sealer, Runtime: tenantRuntime{tn}}
}

var (
	_ rpcapi.TenantAdmin    = service.TenantAdmin{}
	_ service.TenantRuntime = tenantRuntime{}
)

// tenantRuntime is the tenancy runtime as the tenant use cases see it.
type tenantRuntime struct{ tn *tenancy }

// DefaultHosts implements service.TenantRuntime.
func (r tenantRuntime) DefaultHosts() []string { return r.tn.defaultHosts() }

// CheckTenantNames implements service.TenantRuntime.
func (r tenantRuntime) CheckTenantNames(ctx context.Context, id string) error {
	return r.tn.checkTenantNames(ctx, id)
}

// Reload implements service.TenantRuntime.
func (r tenantRuntime) Reload(ctx context.Context) error { return r.tn.reload(ctx) }

// DropEverywhere implements service.TenantRuntime.
func (r tenantRuntime) DropEverywhere(ctx context.Context, id string) { r.tn.dropEverywhere(ctx, id) }

// StoredUsage implements service.TenantRuntime.
func (r tenantRuntime) StoredUsage(ctx context.Context, id string) (coffer.Usage, error) {
	u, ok := r.tn.s.st.base.(meta.Tenanted).ForTenant(id).(meta.Usage)
	if !ok {
		return coffer.Usage{}, coffer.Errorf(coffer.ENOTIMPLEMENTED, "the metadata store keeps no usage")
	}
	return u.Usage(ctx)
}

// Served implements service.TenantRuntime.
func (r tenantRuntime) Served(id string) (requests, bytes int64) {
	c := r.tn.served(id)
	return c.requests.Load(), c.bytes.Load()
}
