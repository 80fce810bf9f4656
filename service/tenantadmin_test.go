package service_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/meta/sqlite"
	"github.com/coffer/coffer/service"
	"github.com/coffer/coffer/tenant"
)

// fakeRuntime is a service.TenantRuntime that counts what it is asked.
type fakeRuntime struct{ reloads, drops int }

func (r *fakeRuntime) DefaultHosts() []string                         { return []string{"files.test"} }
func (r *fakeRuntime) CheckTenantNames(context.Context, string) error { return nil }
func (r *fakeRuntime) Reload(context.Context) error                   { r.reloads++; return nil }
func (r *fakeRuntime) DropEverywhere(context.Context, string)         { r.drops++ }
func (r *fakeRuntime) Served(string) (requests, bytes int64)          { return 7, 700 }
func (r *fakeRuntime) StoredUsage(context.Context, string) (coffer.Usage, error) {
	return coffer.Usage{Bytes: 5, Files: 1}, nil
}

const (
	adminSecret = "tenant-admin-secret-0123"
	presignKey  = "tenant-presign-key-of-32-bytes-or-more"
)

// newTenantAdmin is service.TenantAdmin over a SQLite registry and a fakeRuntime.
func newTenantAdmin(t *testing.T) (service.TenantAdmin, *sqlite.Store, *fakeRuntime) {
	t.Helper()
	m := openSQLite(t)
	sealer, err := tenant.NewSealer(bytes.Repeat([]byte{9}, tenant.SealKeySize))
	if err != nil {
		t.Fatal(err)
	}
	rt := &fakeRuntime{}
	return service.TenantAdmin{Registry: m, Sealer: sealer, Runtime: rt}, m, rt
}

// TestTenantAdminRefusals: bad tenants are refused with the field named from the
// tenant's root, as TenantService's answers name it.
func TestTenantAdminRefusals(t *testing.T) {
	a, _, _ := newTenantAdmin(t)
	for i, c := range []struct {
		in    tenant.Input
		code  string
		field string
	}{
		{tenant.Input{ID: "Acme"}, coffer.EINVALID, "id"},
		{tenant.Input{ID: "acme", Hosts: []string{"ok.test", "bad host"}}, coffer.EINVALID, "hosts[1]"},
		{tenant.Input{ID: "acme", Hosts: []string{"FILES.test"}}, coffer.ECONFLICT, ""},
		{tenant.Input{ID: "acme", Settings: tenant.Settings{JWT: json.RawMessage(`{"type":"HS256"}`)}}, coffer.EINVALID, "settings.jwt"},
		{tenant.Input{ID: "acme", Settings: tenant.Settings{AdminSecrets: []string{"short"}}}, coffer.EINVALID, "settings.adminSecrets[0]"},
		{tenant.Input{ID: "acme", Settings: tenant.Settings{Limits: tenant.Limits{Burst: 3}}}, coffer.EINVALID, "settings.limits.burst"},
	} {
		_, err := a.Create(context.Background(), c.in)
		if coffer.ErrorCode(err) != c.code || fieldOf(err) != c.field {
			t.Errorf("case %d: Create = %v (field %q), want %s naming %q", i, err, fieldOf(err), c.code, c.field)
		}
	}
}

// fieldOf is err's field, if it names one.
func fieldOf(err error) string {
	if e, ok := err.(*coffer.Error); ok {
		return e.Field
	}
	return ""
}

// TestTenantAdminSecrets: secrets are stored hashed or sealed, never answered, and
// kept by an update that leaves them empty; every change is reloaded; Delete drops
// the tenant everywhere, and its id cannot be taken while it is being deleted.
func TestTenantAdminSecrets(t *testing.T) {
	ctx := context.Background()
	a, m, rt := newTenantAdmin(t)
	in := tenant.Input{ID: "acme", Hosts: []string{"Acme.Test"},
		Settings: tenant.Settings{AdminSecrets: []string{adminSecret}, PresignKey: presignKey}}
	v, err := a.Create(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if in.Settings.AdminSecrets[0] != adminSecret {
		t.Errorf("Create changed the caller's settings: %v", in.Settings.AdminSecrets)
	}
	if v.Hosts[0] != "acme.test" || v.Settings.AdminSecrets.Count != 1 || !v.Settings.PresignKey.Set || v.State != coffer.TenantActive {
		t.Fatalf("created %+v", v)
	}
	row, err := m.GetTenant(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(row.Settings, []byte(adminSecret)) || bytes.Contains(row.Settings, []byte(presignKey)) {
		t.Fatalf("stored in clear: %s", row.Settings)
	}
	limits := tenant.Settings{Limits: tenant.Limits{RequestsPerSecond: 10}}
	v, err = a.Update(ctx, "acme", tenant.Change{Settings: &limits})
	if err != nil {
		t.Fatal(err)
	}
	if v.Settings.AdminSecrets.Count != 1 || !v.Settings.PresignKey.Set || v.Settings.Limits.RequestsPerSecond != 10 {
		t.Fatalf("updated %+v: the secrets left empty must keep their stored values", v.Settings)
	}
	if rt.reloads != 2 {
		t.Errorf("%d reloads after a create and an update, want 2", rt.reloads)
	}
	u, err := a.Usage(ctx, "acme")
	if err != nil || u.Stored.Bytes != 5 || u.Requests != 7 || u.ServedBytes != 700 {
		t.Errorf("usage %+v, %v", u, err)
	}
	if err := a.Delete(ctx, "acme"); err != nil || rt.drops != 1 {
		t.Fatalf("Delete: %v (%d drops)", err, rt.drops)
	}
	_, err = a.Create(ctx, tenant.Input{ID: "acme"})
	if coffer.ErrorCode(err) != coffer.EPRECONDITION || !strings.Contains(coffer.ErrorMessage(err), "being deleted") {
		t.Errorf("re-create while deleting: %v", err)
	}
	if _, err := a.SetState(ctx, "acme", coffer.TenantActive); coffer.ErrorCode(err) != coffer.EPRECONDITION {
		t.Errorf("resume while deleting: %v", err)
	}
}
