package service

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/meta"
	"github.com/coffer/coffer/tenant"
)

// TenantAdmin is the platform admin's tenant use cases over the tenants registry:
// it validates tenants (package tenant), hashes admin secrets and seals keys before
// they are stored, and answers tenants redacted (tenant.View: no secret, hash or
// sealed value). Tenants cross it as package tenant's types, never wire bytes. It
// checks no credentials: its callers (the management API's TenantService) admit
// only the platform admin.
type TenantAdmin struct {
	Registry meta.Tenants
	Sealer   *tenant.Sealer // seals the tenants' keys (the server key)
	Runtime  TenantRuntime
}

// TenantRuntime is what the tenant use cases need of the tenancy runtime that
// serves the tenants (app implements it).
type TenantRuntime interface {
	// DefaultHosts are the default tenant's hosts, which no tenant may take.
	DefaultHosts() []string
	// CheckTenantNames returns ECONFLICT if the names tenant id would answer are a
	// site's hosts.
	CheckTenantNames(ctx context.Context, id string) error
	// Reload reads the tenants again, so a change is live on this node at once.
	Reload(ctx context.Context) error
	// DropEverywhere drops tenant id's cached state on every node.
	DropEverywhere(ctx context.Context, id string)
	// StoredUsage returns what tenant id stores; ENOTIMPLEMENTED if the metadata
	// store keeps no usage.
	StoredUsage(ctx context.Context, id string) (coffer.Usage, error)
	// Served returns the requests and content bytes this node served tenant id.
	Served(id string) (requests, bytes int64)
}

// TenantUsage is a tenant's usage: what it stores (exact, from the metadata store)
// and what this node served it since it started.
type TenantUsage struct {
	Stored      coffer.Usage
	ServedBytes int64 // bytes of content sent to the tenant's clients
	Requests    int64 // requests answered for the tenant
}

// prepare validates written settings s for tenant id, keeps the stored secrets the
// written ones leave empty (old: the stored settings, nil on create), and returns
// the document to store. Errors name fields from the tenant's root ("settings.jwt").
func (a TenantAdmin) prepare(id string, s tenant.Settings, old *tenant.Settings) ([]byte, error) {
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
	if err := s.Prepare(a.Sealer, id); err != nil {
		return nil, prefixField(err, "settings.")
	}
	return json.Marshal(s)
}

// prefixField names an EINVALID error's field from the tenant's root.
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
func (a TenantAdmin) hosts(in []string) ([]string, error) {
	out := make([]string, 0, len(in))
	for i, h := range in {
		n, err := tenant.NormalizeHost(h)
		if err != nil {
			at := fmt.Sprintf("hosts[%d]", i)
			return nil, coffer.InvalidField(at, at+": "+coffer.ErrorMessage(err))
		}
		if slices.Contains(a.Runtime.DefaultHosts(), n) {
			return nil, coffer.Errorf(coffer.ECONFLICT, "host %q is the default tenant's (--default-tenant-hosts)", n)
		}
		out = append(out, n)
	}
	return out, nil
}

// Create stores t (State: active; the registry makes the tenant's "default" bucket
// with it) and returns it. ECONFLICT if the id or one of its hosts is taken;
// EPRECONDITION while a tenant of that id is being deleted; EINVALID for a bad id,
// host or setting (the field named: "id", "hosts[0]", "settings.jwt").
func (a TenantAdmin) Create(ctx context.Context, t tenant.Input) (*tenant.View, error) {
	if err := tenant.ValidID(t.ID); err != nil {
		return nil, prefixField(err, "")
	}
	c := coffer.Tenant{ID: t.ID, Quota: t.Quota}
	var err error
	if c.Hosts, err = a.hosts(t.Hosts); err != nil {
		return nil, err
	}
	if err := a.Runtime.CheckTenantNames(ctx, t.ID); err != nil {
		return nil, err
	}
	if c.Settings, err = a.prepare(t.ID, t.Settings, nil); err != nil {
		return nil, err
	}
	c.State = coffer.TenantActive
	if old, err := a.Registry.GetTenant(ctx, t.ID); err == nil && old.State == coffer.TenantDeleting {
		return nil, coffer.Errorf(coffer.EPRECONDITION, "tenant %s is still being deleted: its id can be taken again once its data is gone (GetTenant answers not found)", t.ID)
	}
	if err := a.Registry.CreateTenant(ctx, &c); err != nil {
		return nil, err
	}
	return a.answer(ctx, c.ID)
}

// answer reloads the tenants (the change is live on this node at once) and returns
// tenant id redacted.
func (a TenantAdmin) answer(ctx context.Context, id string) (*tenant.View, error) {
	if err := a.Runtime.Reload(ctx); err != nil {
		return nil, err
	}
	return a.Get(ctx, id)
}

// Get returns tenant id; ENOTFOUND if there is no such tenant.
func (a TenantAdmin) Get(ctx context.Context, id string) (*tenant.View, error) {
	t, err := a.Registry.GetTenant(ctx, id)
	if err != nil {
		return nil, err
	}
	return tenant.ViewOf(t)
}

// List returns every tenant ordered by id.
func (a TenantAdmin) List(ctx context.Context) ([]*tenant.View, error) {
	list, err := a.Registry.ListTenants(ctx)
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

// Update applies c and returns the tenant. ENOTFOUND if missing, ECONFLICT if a new
// host is another tenant's, EINVALID as Create.
func (a TenantAdmin) Update(ctx context.Context, id string, c tenant.Change) (*tenant.View, error) {
	old, err := a.Registry.GetTenant(ctx, id)
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
	if _, err := a.Registry.UpdateTenant(ctx, id, u); err != nil {
		return nil, err
	}
	return a.answer(ctx, id)
}

// SetState suspends (coffer.TenantSuspended) or resumes (coffer.TenantActive) a
// tenant and returns it. ENOTFOUND if missing; EPRECONDITION for a tenant being
// deleted.
func (a TenantAdmin) SetState(ctx context.Context, id string, state coffer.TenantState) (*tenant.View, error) {
	t, err := a.Registry.GetTenant(ctx, id)
	if err != nil {
		return nil, err
	}
	if t.State == coffer.TenantDeleting {
		return nil, coffer.Errorf(coffer.EPRECONDITION, "tenant %s is being deleted", id)
	}
	if _, err := a.Registry.UpdateTenant(ctx, id, coffer.TenantUpdate{State: &state}); err != nil {
		return nil, err
	}
	return a.answer(ctx, id)
}

// Delete refuses the tenant at once and has every node drop its cached state; its
// data is removed by the tenancy runtime's background purge, on any node, after
// which its id may be taken again. ENOTFOUND if missing.
func (a TenantAdmin) Delete(ctx context.Context, id string) error {
	state := coffer.TenantDeleting
	if _, err := a.Registry.UpdateTenant(ctx, id, coffer.TenantUpdate{State: &state}); err != nil {
		return err
	}
	err := a.Runtime.Reload(ctx)
	a.Runtime.DropEverywhere(ctx, id)
	return err
}

// Usage returns what the tenant stores and what this node served it. ENOTFOUND if
// missing.
func (a TenantAdmin) Usage(ctx context.Context, id string) (TenantUsage, error) {
	if _, err := a.Registry.GetTenant(ctx, id); err != nil {
		return TenantUsage{}, err
	}
	stored, err := a.Runtime.StoredUsage(ctx, id)
	if err != nil {
		return TenantUsage{}, err
	}
	requests, bytes := a.Runtime.Served(id)
	return TenantUsage{Stored: stored, Requests: requests, ServedBytes: bytes}, nil
}
