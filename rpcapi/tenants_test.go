package rpcapi_test

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/auth"
	"github.com/coffer/coffer/proto/gen/coffer/admin/v1/adminv1connect"
	"github.com/coffer/coffer/rpcapi"
)

const platformSecret = "rpc-test-platform-secret"

// fakeTenants is an in-memory rpcapi.TenantAdmin. It keeps the settings as the face
// passed them (secrets in clear) and answers them so, as a careless server would:
// the face must drop the secrets itself. It counts its calls, so that a refused
// call can be shown not to have reached it.
type fakeTenants struct {
	mu      sync.Mutex
	tenants map[string]*coffer.Tenant
	calls   atomic.Int64
}

var _ rpcapi.TenantAdmin = (*fakeTenants)(nil)

// newFakeTenants returns an empty registry.
func newFakeTenants() *fakeTenants { return &fakeTenants{tenants: map[string]*coffer.Tenant{}} }

// Create stores t; ids must be lower-case (as the server's check, in miniature).
func (f *fakeTenants) Create(_ context.Context, t *coffer.Tenant) (*coffer.Tenant, error) {
	f.calls.Add(1)
	f.mu.Lock()
	defer f.mu.Unlock()
	if strings.ToLower(t.ID) != t.ID {
		return nil, coffer.InvalidField("id", "a tenant id is lower-case")
	}
	if f.tenants[t.ID] != nil {
		return nil, coffer.Errorf(coffer.ECONFLICT, "tenant %s exists", t.ID)
	}
	c := *t
	c.State, c.CreatedAt, c.UpdatedAt = coffer.TenantActive, time.Now(), time.Now()
	f.tenants[t.ID] = &c
	return &c, nil
}

// Get returns a copy of tenant id.
func (f *fakeTenants) Get(_ context.Context, id string) (*coffer.Tenant, error) {
	f.calls.Add(1)
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.get(id)
}

// get returns a copy of tenant id (f.mu held).
func (f *fakeTenants) get(id string) (*coffer.Tenant, error) {
	t := f.tenants[id]
	if t == nil {
		return nil, coffer.Errorf(coffer.ENOTFOUND, "no tenant %s", id)
	}
	c := *t
	return &c, nil
}

// List returns every tenant by id.
func (f *fakeTenants) List(context.Context) ([]*coffer.Tenant, error) {
	f.calls.Add(1)
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []*coffer.Tenant
	for id := range f.tenants {
		t, _ := f.get(id)
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// Update applies u.
func (f *fakeTenants) Update(_ context.Context, id string, u coffer.TenantUpdate) (*coffer.Tenant, error) {
	f.calls.Add(1)
	f.mu.Lock()
	defer f.mu.Unlock()
	t := f.tenants[id]
	if t == nil || u.State != nil {
		return nil, coffer.Errorf(coffer.ENOTFOUND, "no tenant %s (or a state in an update)", id)
	}
	if u.Hosts != nil {
		t.Hosts = *u.Hosts
	}
	if u.Settings != nil {
		t.Settings = *u.Settings
	}
	if u.Quota != nil {
		t.Quota = *u.Quota
	}
	t.UpdatedAt = time.Now()
	return f.get(id)
}

// SetState changes a tenant's state; a deleting one stays so.
func (f *fakeTenants) SetState(_ context.Context, id string, state coffer.TenantState) (*coffer.Tenant, error) {
	f.calls.Add(1)
	f.mu.Lock()
	defer f.mu.Unlock()
	t, err := f.get(id)
	if err != nil {
		return nil, err
	}
	if t.State == coffer.TenantDeleting {
		return nil, coffer.Errorf(coffer.EPRECONDITION, "tenant %s is being deleted", id)
	}
	f.tenants[id].State = state
	return f.get(id)
}

// Delete marks a tenant deleting.
func (f *fakeTenants) Delete(_ context.Context, id string) error {
	f.calls.Add(1)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.tenants[id] == nil {
		return coffer.Errorf(coffer.ENOTFOUND, "no tenant %s", id)
	}
	f.tenants[id].State = coffer.TenantDeleting
	return nil
}

// Usage answers fixed counters for a known tenant.
func (f *fakeTenants) Usage(_ context.Context, id string) (rpcapi.TenantUsage, error) {
	f.calls.Add(1)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.tenants[id] == nil {
		return rpcapi.TenantUsage{}, coffer.Errorf(coffer.ENOTFOUND, "no tenant %s", id)
	}
	return rpcapi.TenantUsage{Stored: coffer.Usage{Bytes: 1234, Files: 5}, ServedBytes: 999, Requests: 42}, nil
}

// stored returns tenant id's settings document as the face passed it.
func (f *fakeTenants) stored(id string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return string(f.tenants[id].Settings)
}

// tenantEnv is the RPC face alone, with TenantService over a fakeTenants, served on
// 127.0.0.1; its other credentials are newEnv's (adminSecret, HS256 JWTs).
type tenantEnv struct {
	base string
	fake *fakeTenants
}

// newTenantEnv starts the face with the platform secret.
func newTenantEnv(t *testing.T) *tenantEnv {
	authn, err := auth.New(auth.Config{AdminSecret: adminSecret, UnauthorizedRole: "public", JWTSecret: jwtConfig, JWTAdminRole: true})
	check(t, "auth.New", err)
	fake := newFakeTenants()
	cfg := rpcapi.DefaultConfig()
	cfg.Tenants, cfg.PlatformSecret = fake, platformSecret
	h, err := rpcapi.New(cfg, nil, nil, nil, authn, slog.New(slog.DiscardHandler))
	check(t, "rpcapi.New", err)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &tenantEnv{base: srv.URL, fake: fake}
}

// tenantClient is TenantService's client at base, sending hdr (key, value pairs).
func tenantClient(base string, hdr ...string) adminv1connect.TenantServiceClient {
	return adminv1connect.NewTenantServiceClient(httpClient(hdr...), base)
}

// asPlatform is the platform admin's client.
func (e *tenantEnv) asPlatform() adminv1connect.TenantServiceClient {
	return tenantClient(e.base, rpcapi.HeaderPlatformSecret, platformSecret)
}

// TestTenantConfig: tenants without a platform secret are a configuration error.
func TestTenantConfig(t *testing.T) {
	cfg := rpcapi.DefaultConfig()
	cfg.Tenants = newFakeTenants()
	if cfg.Validate() == nil {
		t.Fatal("tenants without a platform secret passed Validate")
	}
	cfg.PlatformSecret = "x"
	check(t, "Validate", cfg.Validate())
}
