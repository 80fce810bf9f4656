package app

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/meta"
	"github.com/coffer/coffer/rpcapi"
	"github.com/coffer/coffer/tenant"
)

// tenantAdmin is the management API's TenantService over the tenant registry
// (rpcapi.TenantAdmin). Settings cross it as tenant.Settings, their secrets in
// clear; it validates them, hashes admin secrets, seals keys, and answers them
// redacted (tenant.View: no secret, digest or sealed value).
type tenantAdmin struct{ tn *tenancy }

var _ rpcapi.TenantAdmin = tenantAdmin{}

// prepare validates written settings s for tenant id, keeps the stored secrets the
// written ones leave empty (old: the stored document, nil on create), and returns
// the document to store.
func (a tenantAdmin) prepare(id string, s tenant.Settings, old *tenant.Settings) ([]byte, error) {
	s.AdminSecrets = slices.Clone(s.AdminSecrets) // Prepare hashes them in place: not the caller's
	if old != nil {
		if len(s.AdminSecrets) == 0 {
			s.AdminSecrets = old.AdminSecrets
		}
		if s.PresignKey == "" {
			s.PresignKey = old.PresignKey
		}
		if s.Storage.SecretAccessKey == "" {
			s.Storage.SecretAccessKey = old.Storage.SecretAccessKey
		}
		if len(s.JWT) == 0 {
			s.JWT = old.JWT
		}
	}
	if err := s.Prepare(a.tn.sealer, id); err != nil {
		return nil, prefixField(err, "settings.")
	}
	return json.Marshal(s)
}

// prefixField names an EINVALID error's field from the request's root.
func prefixField(err error, prefix string) error {
	if e, ok := err.(*coffer.Error); ok && e.Code == coffer.EINVALID && e.Field != "" {
		c := *e
		c.Field = prefix + e.Field
		return &c
	}
	return err
}

// hosts validates and normalizes a tenant's hosts; the default tenant's are not
// available.
func (a tenantAdmin) hosts(in []string) ([]string, error) {
	out := make([]string, 0, len(in))
	for i, h := range in {
		n, err := tenant.NormalizeHost(h)
		if err != nil {
			at := fmt.Sprintf("hosts[%d]", i)
			return nil, coffer.InvalidField(at, at+": "+coffer.ErrorMessage(err))
		}
		if slices.Contains(a.tn.defaultHosts(), n) {
			return nil, coffer.Errorf(coffer.ECONFLICT, "host %q is the default tenant's (--default-tenant-hosts)", n)
		}
		out = append(out, n)
	}
	return out, nil
}

// Create implements rpcapi.TenantAdmin (the registry makes the tenant's "default"
// bucket with it).
func (a tenantAdmin) Create(ctx context.Context, t tenant.Input) (*tenant.View, error) {
	if err := tenant.ValidID(t.ID); err != nil {
		return nil, prefixField(err, "")
	}
	c := coffer.Tenant{ID: t.ID, Quota: t.Quota}
	var err error
	if c.Hosts, err = a.hosts(t.Hosts); err != nil {
		return nil, err
	}
	if err := a.tn.checkTenantNames(ctx, t.ID); err != nil {
		return nil, err
	}
	if c.Settings, err = a.prepare(t.ID, t.Settings, nil); err != nil {
		return nil, err
	}
	c.State = coffer.TenantActive
	if old, err := a.tn.reg.GetTenant(ctx, t.ID); err == nil && old.State == coffer.TenantDeleting {
		return nil, coffer.Errorf(coffer.EPRECONDITION, "tenant %s is still being deleted: its id can be taken again once its data is gone (GetTenant answers not found)", t.ID)
	}
	if err := a.tn.reg.CreateTenant(ctx, &c); err != nil {
		return nil, err
	}
	return a.answer(ctx, c.ID)
}

// answer reloads the tenants (the change is live on this node at once) and returns
// tenant id redacted.
func (a tenantAdmin) answer(ctx context.Context, id string) (*tenant.View, error) {
	if err := a.tn.reload(ctx); err != nil {
		return nil, err
	}
	return a.Get(ctx, id)
}

// Get implements rpcapi.TenantAdmin.
func (a tenantAdmin) Get(ctx context.Context, id string) (*tenant.View, error) {
	t, err := a.tn.reg.GetTenant(ctx, id)
	if err != nil {
		return nil, err
	}
	return tenant.ViewOf(t)
}

// List implements rpcapi.TenantAdmin.
func (a tenantAdmin) List(ctx context.Context) ([]*tenant.View, error) {
	list, err := a.tn.reg.ListTenants(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]*tenant.View, len(list))
	for i, t := range list {
		if out[i], err = tenant.ViewOf(t); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Update implements rpcapi.TenantAdmin.
func (a tenantAdmin) Update(ctx context.Context, id string, c tenant.Change) (*tenant.View, error) {
	old, err := a.tn.reg.GetTenant(ctx, id)
	if err != nil {
		return nil, err
	}
	u := coffer.TenantUpdate{Quota: c.Quota}
	if c.Hosts != nil {
		h, err := a.hosts(*c.Hosts)
		if err != nil {
			return nil, err
		}
		u.Hosts = &h
	}
	if c.Settings != nil {
		stored, err := tenant.Parse(old.Settings)
		if err != nil {
			return nil, coffer.Internal(err, "tenant "+id+": stored settings")
		}
		doc, err := a.prepare(id, *c.Settings, stored)
		if err != nil {
			return nil, err
		}
		u.Settings = &doc
	}
	if _, err := a.tn.reg.UpdateTenant(ctx, id, u); err != nil {
		return nil, err
	}
	return a.answer(ctx, id)
}

// SetState implements rpcapi.TenantAdmin.
func (a tenantAdmin) SetState(ctx context.Context, id string, state coffer.TenantState) (*tenant.View, error) {
	t, err := a.tn.reg.GetTenant(ctx, id)
	if err != nil {
		return nil, err
	}
	if t.State == coffer.TenantDeleting {
		return nil, coffer.Errorf(coffer.EPRECONDITION, "tenant %s is being deleted", id)
	}
	if _, err := a.tn.reg.UpdateTenant(ctx, id, coffer.TenantUpdate{State: &state}); err != nil {
		return nil, err
	}
	return a.answer(ctx, id)
}

// Delete implements rpcapi.TenantAdmin: the tenant is refused at once and every node
// drops its cache entries; its data is removed by the background purge
// (tenancy.purgeDeleted), on any node, after which its id may be taken again.
func (a tenantAdmin) Delete(ctx context.Context, id string) error {
	state := coffer.TenantDeleting
	if _, err := a.tn.reg.UpdateTenant(ctx, id, coffer.TenantUpdate{State: &state}); err != nil {
		return err
	}
	err := a.tn.reload(ctx)
	a.tn.dropEverywhere(ctx, id)
	return err
}

// Usage implements rpcapi.TenantAdmin.
func (a tenantAdmin) Usage(ctx context.Context, id string) (rpcapi.TenantUsage, error) {
	if _, err := a.tn.reg.GetTenant(ctx, id); err != nil {
		return rpcapi.TenantUsage{}, err
	}
	u, ok := a.tn.s.st.base.(meta.Tenanted).ForTenant(id).(meta.Usage)
	if !ok {
		return rpcapi.TenantUsage{}, coffer.Errorf(coffer.ENOTIMPLEMENTED, "the metadata store keeps no usage")
	}
	stored, err := u.Usage(ctx)
	if err != nil {
		return rpcapi.TenantUsage{}, err
	}
	served := a.tn.served(id)
	return rpcapi.TenantUsage{Stored: stored, Requests: served.requests.Load(), ServedBytes: served.bytes.Load()}, nil
}
