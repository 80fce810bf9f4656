package rpcapi_test

import (
	"context"
	"encoding/json"
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
	"github.com/coffer/coffer/tenant"
)

const platformSecret = "rpc-test-platform-secret"

// fakeTenants is an in-memory rpcapi.TenantAdmin. It keeps the settings as the face
// passed them (secrets in clear, as their JSON) without validating them, and answers
// them redacted (tenant.View holds no secret). It counts its calls, so that a refused
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
func (f *fakeTenants) Create(_ context.Context, t tenant.Input) (*tenant.View, error) {
	f.calls.Add(1)
	f.mu.Lock()
	defer f.mu.Unlock()
	if strings.ToLower(t.ID) != t.ID {
		return nil, coffer.InvalidField("id", "a tenant id is lower-case")
	}
	if f.tenants[t.ID] != nil {
		return nil, coffer.Errorf(coffer.ECONFLICT, "tenant %s exists", t.ID)
	}
	doc, err := json.Marshal(t.Settings)
	if err != nil {
		return nil, err
	}
	f.tenants[t.ID] = &coffer.Tenant{ID: t.ID, Hosts: t.Hosts, Settings: doc, Quota: t.Quota, State: coffer.TenantActive,
		CreatedAt: time.Now(), UpdatedAt: time.Now()}
	return f.get(t.ID)
}

// Get returns a copy of tenant id.
func (f *fakeTenants) Get(_ context.Context, id string) (*tenant.View, error) {
	f.calls.Add(1)
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.get(id)
}

// get returns tenant id as answers show it (f.mu held).
func (f *fakeTenants) get(id string) (*tenant.View, error) {
	t := f.tenants[id]
	if t == nil {
		return nil, coffer.Errorf(coffer.ENOTFOUND, "no tenant %s", id)
	}
	var s tenant.Settings
	if err := json.Unmarshal(t.Settings, &s); err != nil {
		return nil, err
	}
	return &tenant.View{ID: t.ID, Hosts: t.Hosts, Settings: s.Redacted(), State: t.State, Quota: t.Quota,
		CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt}, nil
}

// List returns every tenant by id.
func (f *fakeTenants) List(context.Context) ([]*tenant.View, error) {
	f.calls.Add(1)
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []*tenant.View
	for id := range f.tenants {
		t, _ := f.get(id)
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// Update applies u.
func (f *fakeTenants) Update(_ context.Context, id string, u tenant.Change) (*tenant.View, error) {
	f.calls.Add(1)
	f.mu.Lock()
	defer f.mu.Unlock()
	t := f.tenants[id]
	if t == nil {
		return nil, coffer.Errorf(coffer.ENOTFOUND, "no tenant %s", id)
	}
	if u.Hosts != nil {
		t.Hosts = *u.Hosts
	}
	if u.Settings != nil {
		doc, err := json.Marshal(*u.Settings)
		if err != nil {
			return nil, err
		}
		t.Settings = doc
	}
	if u.Quota != nil {
		t.Quota = *u.Quota
	}
	t.UpdatedAt = time.Now()
	return f.get(id)
}

// SetState changes a tenant's state; a deleting one stays so.
func (f *fakeTenants) SetState(_ context.Context, id string, state coffer.TenantState) (*tenant.View, error) {
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

// stored returns the JSON of tenant id's settings as the face passed them.
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
