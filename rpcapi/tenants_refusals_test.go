package rpcapi_test

import (
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"connectrpc.com/connect"

	"github.com/coffer/coffer/auth"
	adminv1 "github.com/coffer/coffer/proto/gen/coffer/admin/v1"
	"github.com/coffer/coffer/proto/gen/coffer/admin/v1/adminv1connect"
	"github.com/coffer/coffer/rpcapi"
)

// tenantCalls are every TenantService method, by name, with well-formed arguments
// (but id, for the methods that take a tenant's).
func tenantCalls(c adminv1connect.TenantServiceClient, id string) map[string]func() error {
	return map[string]func() error{
		"CreateTenant": func() error {
			return errOf(c.CreateTenant(ctx(), req(&adminv1.CreateTenantRequest{Id: "sneaky", Hosts: []string{"sneaky.test"}})))
		},
		"GetTenant":   func() error { return errOf(c.GetTenant(ctx(), req(&adminv1.GetTenantRequest{Id: id}))) },
		"ListTenants": func() error { return errOf(c.ListTenants(ctx(), req(&adminv1.ListTenantsRequest{}))) },
		"UpdateTenant": func() error {
			return errOf(c.UpdateTenant(ctx(), req(&adminv1.UpdateTenantRequest{Id: id, Quota: &adminv1.Quota{MaxBytes: 1}})))
		},
		"SuspendTenant":  func() error { return errOf(c.SuspendTenant(ctx(), req(&adminv1.SuspendTenantRequest{Id: id}))) },
		"ResumeTenant":   func() error { return errOf(c.ResumeTenant(ctx(), req(&adminv1.ResumeTenantRequest{Id: id}))) },
		"DeleteTenant":   func() error { return errOf(c.DeleteTenant(ctx(), req(&adminv1.DeleteTenantRequest{Id: id}))) },
		"GetTenantUsage": func() error { return errOf(c.GetTenantUsage(ctx(), req(&adminv1.GetTenantUsageRequest{Id: id}))) },
	}
}

// TestTenantServiceRefusals: without the platform secret every TenantService
// method is refused before it reaches the server: no credential or a wrong (or
// doubled) platform secret UNAUTHENTICATED, the admin secret (a tenant's, on a
// tenant's host) or a JWT, even of role admin, PERMISSION_DENIED. The platform
// secret then still works: acme was not changed.
func TestTenantServiceRefusals(t *testing.T) {
	e := newTenantEnv(t)
	_, err := e.asPlatform().CreateTenant(ctx(), req(&adminv1.CreateTenantRequest{Id: "acme"}))
	check(t, "CreateTenant", err)
	before := e.fake.calls.Load()
	h := rpcapi.HeaderPlatformSecret
	for _, tc := range []struct {
		name string
		c    adminv1connect.TenantServiceClient
		code connect.Code
	}{
		{"anonymous", tenantClient(e.base), connect.CodeUnauthenticated},
		{"wrong platform secret", tenantClient(e.base, h, "nope"), connect.CodeUnauthenticated},
		{"empty platform secret", tenantClient(e.base, h, ""), connect.CodeUnauthenticated},
		{"platform secret in Authorization", tenantClient(e.base, "Authorization", "Bearer "+platformSecret), connect.CodeUnauthenticated},
		{"platform secret as the admin secret", tenantClient(e.base, "X-Hasura-Admin-Secret", platformSecret), connect.CodeUnauthenticated},
		{"tenant admin secret", tenantClient(e.base, "X-Hasura-Admin-Secret", adminSecret), connect.CodePermissionDenied},
		{"user JWT", tenantClient(e.base, "Authorization", "Bearer "+token(t, "user", "alice")), connect.CodePermissionDenied},
		{"admin JWT", tenantClient(e.base, "Authorization", "Bearer "+token(t, "admin", "root")), connect.CodePermissionDenied},
	} {
		for what, call := range tenantCalls(tc.c, "acme") {
			wantCode(t, tc.name+" "+what, call(), tc.code)
		}
	}
	doubled := &http.Client{Transport: headerTransport{rt: http.DefaultTransport, hdr: http.Header{h: {platformSecret, platformSecret}}}}
	for what, call := range tenantCalls(adminv1connect.NewTenantServiceClient(doubled, e.base), "acme") {
		wantCode(t, "doubled platform secret "+what, call(), connect.CodeUnauthenticated)
	}
	if n := e.fake.calls.Load() - before; n != 0 {
		t.Fatalf("refused calls reached the server %d times", n)
	}
	got, err := e.asPlatform().GetTenant(ctx(), req(&adminv1.GetTenantRequest{Id: "acme"}))
	check(t, "GetTenant", err)
	if got.Msg.GetTenant().GetState() != adminv1.TenantState_TENANT_STATE_ACTIVE || got.Msg.GetTenant().GetQuota().GetMaxBytes() != 0 {
		t.Fatalf("acme changed: %v", got.Msg)
	}
}

// TestTenantServiceOff: on a server without multi-tenancy (app wires no
// TenantAdmin) every method is FAILED_PRECONDITION, saying so, whoever calls.
func TestTenantServiceOff(t *testing.T) {
	e := newEnv(t)
	for name, hc := range map[string][]string{"platform": {rpcapi.HeaderPlatformSecret, platformSecret},
		"admin": {"X-Hasura-Admin-Secret", adminSecret}, "anonymous": nil} {
		for what, call := range tenantCalls(tenantClient(e.base, hc...), "acme") {
			ce := wantCode(t, name+" "+what, call(), connect.CodeFailedPrecondition)
			if !strings.Contains(ce.Message(), "multi-tenancy is off") {
				t.Errorf("%s %s: %q", name, what, ce.Message())
			}
		}
	}
}

// TestTenantServiceOnTenantHost: the face of a tenant's hosts refuses every
// TenantService call with PERMISSION_DENIED, even with the platform secret; a face
// cannot be both.
func TestTenantServiceOnTenantHost(t *testing.T) {
	cfg := rpcapi.DefaultConfig()
	cfg.TenantHost = true
	authn, err := auth.New(auth.Config{AdminSecret: adminSecret, UnauthorizedRole: "public"})
	check(t, "auth.New", err)
	h, err := rpcapi.New(cfg, nil, nil, nil, authn, slog.New(slog.DiscardHandler))
	check(t, "rpcapi.New", err)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	for name, hc := range map[string][]string{"platform": {rpcapi.HeaderPlatformSecret, platformSecret},
		"tenant admin": {"X-Hasura-Admin-Secret", adminSecret}} {
		for what, call := range tenantCalls(tenantClient(srv.URL, hc...), "acme") {
			ce := wantCode(t, name+" "+what, call(), connect.CodePermissionDenied)
			if !strings.Contains(ce.Message(), "platform's hosts") {
				t.Errorf("%s %s: %q", name, what, ce.Message())
			}
		}
	}
	cfg.Tenants, cfg.PlatformSecret = newFakeTenants(), platformSecret
	if cfg.Validate() == nil {
		t.Error("a tenant's face managing tenants passed Validate")
	}
}

// TestTenantServiceBadInput: empty and oversized arguments are INVALID_ARGUMENT
// naming their field, and never reach the server.
func TestTenantServiceBadInput(t *testing.T) {
	e := newTenantEnv(t)
	c := e.asPlatform()
	long := strings.Repeat("a", 64)
	create := func(r *adminv1.CreateTenantRequest) func() error {
		return func() error { return errOf(c.CreateTenant(ctx(), req(r))) }
	}
	limits := func(l *adminv1.TenantLimits) func() error {
		return create(&adminv1.CreateTenantRequest{Id: "a", Settings: &adminv1.TenantSettings{Limits: l}})
	}
	for _, tc := range []struct {
		name, field string
		call        func() error
	}{
		{"CreateTenant empty id", "id", create(&adminv1.CreateTenantRequest{})},
		{"CreateTenant long id", "id", create(&adminv1.CreateTenantRequest{Id: long})},
		{"CreateTenant empty host", "hosts[1]", create(&adminv1.CreateTenantRequest{Id: "a", Hosts: []string{"a.test", ""}})},
		{"CreateTenant long host", "hosts[0]", create(&adminv1.CreateTenantRequest{Id: "a", Hosts: []string{strings.Repeat("h", 254)}})},
		{"CreateTenant 101 hosts", "hosts", create(&adminv1.CreateTenantRequest{Id: "a", Hosts: make([]string, 101)})},
		{"CreateTenant empty admin secret", "settings.adminSecrets[0]", create(&adminv1.CreateTenantRequest{Id: "a",
			Settings: &adminv1.TenantSettings{AdminSecrets: []string{""}}})},
		{"CreateTenant 65 KiB settings", "settings", create(&adminv1.CreateTenantRequest{Id: "a",
			Settings: &adminv1.TenantSettings{Jwt: strings.Repeat("k", 65<<10)}})},
		{"CreateTenant negative quota", "quota.maxBytes", create(&adminv1.CreateTenantRequest{Id: "a", Quota: &adminv1.Quota{MaxBytes: -1}})},
		{"CreateTenant negative file quota", "quota.maxFiles", create(&adminv1.CreateTenantRequest{Id: "a", Quota: &adminv1.Quota{MaxFiles: -1}})},
		{"NaN rate", "settings.limits.requestsPerSecond", limits(&adminv1.TenantLimits{RequestsPerSecond: math.NaN()})},
		{"infinite bandwidth", "settings.limits.bytesPerSecond", limits(&adminv1.TenantLimits{BytesPerSecond: math.Inf(1)})},
		{"negative user burst", "settings.limits.userBurst", limits(&adminv1.TenantLimits{UserBurst: -1})},
		{"negative image concurrency", "settings.limits.imageConcurrency", limits(&adminv1.TenantLimits{ImageConcurrency: -2})},
		{"UpdateTenant empty hosts entry", "hosts[0]", func() error {
			return errOf(c.UpdateTenant(ctx(), req(&adminv1.UpdateTenantRequest{Id: "a", Hosts: &adminv1.Hosts{Hosts: []string{""}}})))
		}},
		{"UpdateTenant negative rate", "settings.limits.userRequestsPerSecond", func() error {
			return errOf(c.UpdateTenant(ctx(), req(&adminv1.UpdateTenantRequest{Id: "a",
				Settings: &adminv1.TenantSettings{Limits: &adminv1.TenantLimits{UserRequestsPerSecond: -1}}})))
		}},
		{"UpdateTenant negative quota", "quota.maxFiles", func() error {
			return errOf(c.UpdateTenant(ctx(), req(&adminv1.UpdateTenantRequest{Id: "a", Quota: &adminv1.Quota{MaxFiles: -5}})))
		}},
		{"ListTenants page size", "pageSize", func() error { return errOf(c.ListTenants(ctx(), req(&adminv1.ListTenantsRequest{PageSize: 1001}))) }},
		{"ListTenants negative page size", "pageSize", func() error { return errOf(c.ListTenants(ctx(), req(&adminv1.ListTenantsRequest{PageSize: -1}))) }},
		{"ListTenants bad token", "pageToken", func() error { return errOf(c.ListTenants(ctx(), req(&adminv1.ListTenantsRequest{PageToken: "!!"}))) }},
	} {
		wantField(t, tc.name, tc.call(), tc.field)
	}
	for what, call := range tenantCalls(c, "") {
		if what != "CreateTenant" && what != "ListTenants" {
			wantField(t, what+" empty id", call(), "id")
		}
	}
	if n := e.fake.calls.Load(); n != 0 {
		t.Fatalf("bad input reached the server %d times", n)
	}
}
