package app

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/meta"
	adminv1 "github.com/coffer/coffer/proto/gen/coffer/admin/v1"
	"github.com/coffer/coffer/rpcapi"
	"github.com/coffer/coffer/tenant"
)

// tenantAdmin is the management API's TenantService over the tenant registry
// (rpcapi.TenantAdmin). Settings cross it in the wire form (the protojson of
// coffer.admin.v1.TenantSettings, decoded with the generated type); it validates them, hashes admin secrets, seals
// keys, and answers them redacted (no secret, digest or sealed value).
type tenantAdmin struct{ tn *tenancy }

var _ rpcapi.TenantAdmin = tenantAdmin{}

// fromWire decodes wire settings (the protojson of adminv1.TenantSettings) into
// the settings document (secrets in plaintext).
func fromWire(doc []byte) (*tenant.Settings, error) {
	w := &adminv1.TenantSettings{}
	if len(doc) > 0 {
		if err := (protojson.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(doc, w); err != nil {
			return nil, coffer.InvalidField("settings", "settings: "+err.Error())
		}
	}
	s := &tenant.Settings{AdminSecrets: w.GetAdminSecrets(), PresignKey: w.GetPresignKey(), UnauthorizedRole: w.GetUnauthorizedRole()}
	if j := w.GetJwt(); j != "" {
		if !json.Valid([]byte(j)) {
			return nil, coffer.InvalidField("settings.jwt", "settings.jwt: not a JSON document (the same as --jwt-secret)")
		}
		s.JWT = json.RawMessage(j)
	}
	if st := w.GetStorage(); st != nil {
		s.Storage = tenant.Storage{Kind: st.GetKind(), Endpoint: st.GetEndpoint(), Region: st.GetRegion(), Bucket: st.GetBucket(),
			Prefix: st.GetPrefix(), AccessKeyID: st.GetAccessKeyId(), SecretAccessKey: st.GetSecretAccessKey(), PathStyle: st.GetPathStyle()}
	}
	if l := w.GetLimits(); l != nil {
		s.Limits = tenant.Limits{RequestsPerSecond: l.GetRequestsPerSecond(), Burst: int(l.GetBurst()),
			UserRequestsPerSecond: l.GetUserRequestsPerSecond(), UserBurst: int(l.GetUserBurst()),
			BytesPerSecond: int64(l.GetBytesPerSecond()), ImageConcurrency: int(l.GetImageConcurrency())}
	}
	return s, nil
}

// toWire encodes stored settings redacted, in the wire form.
func toWire(stored []byte) ([]byte, error) {
	s, err := tenant.Parse(stored)
	if err != nil {
		return nil, err
	}
	r, l := s.Redacted(), s.Limits
	w := &adminv1.TenantSettings{AdminSecretsCount: int32(r.AdminSecrets.Count), PresignKeySet: r.PresignKey.Set,
		UnauthorizedRole: r.UnauthorizedRole, Jwt: string(r.JWT),
		Storage: &adminv1.TenantStorage{Kind: r.Storage.Kind, Endpoint: r.Storage.Endpoint, Region: r.Storage.Region,
			Bucket: r.Storage.Bucket, Prefix: r.Storage.Prefix, AccessKeyId: r.Storage.AccessKeyID,
			SecretAccessKeySet: r.Storage.SecretAccessKey.Set, PathStyle: r.Storage.PathStyle},
		Limits: &adminv1.TenantLimits{RequestsPerSecond: l.RequestsPerSecond, Burst: int32(l.Burst),
			UserRequestsPerSecond: l.UserRequestsPerSecond, UserBurst: int32(l.UserBurst),
			BytesPerSecond: float64(l.BytesPerSecond), ImageConcurrency: int32(l.ImageConcurrency)}}
	return protojson.Marshal(w)
}

// prepare validates written settings for tenant id, keeps the stored secrets the
// written ones leave empty (old: the stored document, nil on create), and returns
// the document to store.
func (a tenantAdmin) prepare(id string, doc []byte, old *tenant.Settings) ([]byte, error) {
	s, err := fromWire(doc)
	if err != nil {
		return nil, err
	}
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
func (a tenantAdmin) Create(ctx context.Context, t *coffer.Tenant) (*coffer.Tenant, error) {
	if err := tenant.ValidID(t.ID); err != nil {
		return nil, prefixField(err, "")
	}
	c := *t
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
func (a tenantAdmin) answer(ctx context.Context, id string) (*coffer.Tenant, error) {
	if err := a.tn.reload(ctx); err != nil {
		return nil, err
	}
	return a.Get(ctx, id)
}

// Get implements rpcapi.TenantAdmin.
func (a tenantAdmin) Get(ctx context.Context, id string) (*coffer.Tenant, error) {
	t, err := a.tn.reg.GetTenant(ctx, id)
	if err != nil {
		return nil, err
	}
	return redacted(t)
}

// redacted returns t with its settings in the redacted wire form.
func redacted(t *coffer.Tenant) (*coffer.Tenant, error) {
	c := *t
	var err error
	if c.Settings, err = toWire(t.Settings); err != nil {
		return nil, coffer.Internal(err, "tenant "+t.ID+": stored settings")
	}
	return &c, nil
}

// List implements rpcapi.TenantAdmin.
func (a tenantAdmin) List(ctx context.Context) ([]*coffer.Tenant, error) {
	list, err := a.tn.reg.ListTenants(ctx)
	if err != nil {
		return nil, err
	}
	for i, t := range list {
		if list[i], err = redacted(t); err != nil {
			return nil, err
		}
	}
	return list, nil
}

// Update implements rpcapi.TenantAdmin.
func (a tenantAdmin) Update(ctx context.Context, id string, u coffer.TenantUpdate) (*coffer.Tenant, error) {
	old, err := a.tn.reg.GetTenant(ctx, id)
	if err != nil {
		return nil, err
	}
	if u.Hosts != nil {
		h, err := a.hosts(*u.Hosts)
		if err != nil {
			return nil, err
		}
		u.Hosts = &h
	}
	if u.Settings != nil {
		stored, err := tenant.Parse(old.Settings)
		if err != nil {
			return nil, coffer.Internal(err, "tenant "+id+": stored settings")
		}
		doc, err := a.prepare(id, *u.Settings, stored)
		if err != nil {
			return nil, err
		}
		u.Settings = &doc
	}
	u.State = nil
	if _, err := a.tn.reg.UpdateTenant(ctx, id, u); err != nil {
		return nil, err
	}
	return a.answer(ctx, id)
}

// SetState implements rpcapi.TenantAdmin.
func (a tenantAdmin) SetState(ctx context.Context, id string, state coffer.TenantState) (*coffer.Tenant, error) {
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
