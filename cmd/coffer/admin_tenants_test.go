package main

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"

	adminv1 "github.com/coffer/coffer/proto/gen/coffer/admin/v1"
	"github.com/coffer/coffer/proto/gen/coffer/admin/v1/adminv1connect"
)

// recordedTenants is a TenantService that records the calls it gets (method,
// message, credentials) and answers tenant acme (hosts, limits, quota) to any id
// but "nope", which is NOT_FOUND.
type recordedTenants struct {
	adminv1connect.UnimplementedTenantServiceHandler
	mu    sync.Mutex
	calls []string
	msgs  []proto.Message
	hdr   http.Header
}

// acme is the tenant recordedTenants answers.
func acme() *adminv1.Tenant {
	return &adminv1.Tenant{Id: "acme", Hosts: []string{"acme.test"}, State: adminv1.TenantState_TENANT_STATE_ACTIVE,
		Settings: &adminv1.TenantSettings{AdminSecretsCount: 1, Limits: &adminv1.TenantLimits{Burst: 9},
			Jwt: `{"type":"HS256","key":{"set":true}}`},
		Quota: &adminv1.Quota{MaxBytes: 100, MaxFiles: 10}}
}

// record notes a call and returns NOT_FOUND for tenant "nope".
func (r *recordedTenants) record(name string, h http.Header, m proto.Message, id string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls, r.msgs, r.hdr = append(r.calls, name), append(r.msgs, m), h
	if id == "nope" {
		return connect.NewError(connect.CodeNotFound, errors.New("no tenant nope"))
	}
	return nil
}

// CreateTenant records the call.
func (r *recordedTenants) CreateTenant(_ context.Context, q *connect.Request[adminv1.CreateTenantRequest]) (*connect.Response[adminv1.CreateTenantResponse], error) {
	return connect.NewResponse(&adminv1.CreateTenantResponse{Tenant: acme()}), r.record("Create", q.Header(), q.Msg, q.Msg.GetId())
}

// GetTenant records the call.
func (r *recordedTenants) GetTenant(_ context.Context, q *connect.Request[adminv1.GetTenantRequest]) (*connect.Response[adminv1.GetTenantResponse], error) {
	if err := r.record("Get", q.Header(), q.Msg, q.Msg.GetId()); err != nil {
		return nil, err
	}
	return connect.NewResponse(&adminv1.GetTenantResponse{Tenant: acme()}), nil
}

// ListTenants records the call.
func (r *recordedTenants) ListTenants(_ context.Context, q *connect.Request[adminv1.ListTenantsRequest]) (*connect.Response[adminv1.ListTenantsResponse], error) {
	return connect.NewResponse(&adminv1.ListTenantsResponse{Tenants: []*adminv1.Tenant{acme()}, NextPageToken: "tok"}),
		r.record("List", q.Header(), q.Msg, "")
}

// UpdateTenant records the call.
func (r *recordedTenants) UpdateTenant(_ context.Context, q *connect.Request[adminv1.UpdateTenantRequest]) (*connect.Response[adminv1.UpdateTenantResponse], error) {
	return connect.NewResponse(&adminv1.UpdateTenantResponse{Tenant: acme()}), r.record("Update", q.Header(), q.Msg, q.Msg.GetId())
}

// SuspendTenant records the call.
func (r *recordedTenants) SuspendTenant(_ context.Context, q *connect.Request[adminv1.SuspendTenantRequest]) (*connect.Response[adminv1.SuspendTenantResponse], error) {
	return connect.NewResponse(&adminv1.SuspendTenantResponse{Tenant: acme()}), r.record("Suspend", q.Header(), q.Msg, q.Msg.GetId())
}

// ResumeTenant records the call.
func (r *recordedTenants) ResumeTenant(_ context.Context, q *connect.Request[adminv1.ResumeTenantRequest]) (*connect.Response[adminv1.ResumeTenantResponse], error) {
	return connect.NewResponse(&adminv1.ResumeTenantResponse{Tenant: acme()}), r.record("Resume", q.Header(), q.Msg, q.Msg.GetId())
}

// DeleteTenant records the call.
func (r *recordedTenants) DeleteTenant(_ context.Context, q *connect.Request[adminv1.DeleteTenantRequest]) (*connect.Response[adminv1.DeleteTenantResponse], error) {
	return connect.NewResponse(&adminv1.DeleteTenantResponse{}), r.record("Delete", q.Header(), q.Msg, q.Msg.GetId())
}

// GetTenantUsage records the call.
func (r *recordedTenants) GetTenantUsage(_ context.Context, q *connect.Request[adminv1.GetTenantUsageRequest]) (*connect.Response[adminv1.GetTenantUsageResponse], error) {
	return connect.NewResponse(&adminv1.GetTenantUsageResponse{Usage: &adminv1.Usage{Bytes: 77, Requests: 3}}),
		r.record("Usage", q.Header(), q.Msg, q.Msg.GetId())
}

// take returns the calls recorded since the last take and their messages.
func (r *recordedTenants) take() (string, []proto.Message, http.Header) {
	r.mu.Lock()
	defer r.mu.Unlock()
	calls, msgs := strings.Join(r.calls, ","), r.msgs
	r.calls, r.msgs = nil, nil
	return calls, msgs, r.hdr
}

// tenantServer serves a recordedTenants on 127.0.0.1.
func tenantServer(t *testing.T) (*recordedTenants, string) {
	rec := &recordedTenants{}
	mux := http.NewServeMux()
	mux.Handle(adminv1connect.NewTenantServiceHandler(rec))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return rec, srv.URL
}

// runAdmin runs `coffer admin --output json --server url args...`.
func runAdmin(t *testing.T, url string, args ...string) (string, error) {
	t.Helper()
	root := newRootCmd()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(append([]string{"admin", "--output", "json", "--server", url}, args...))
	err := root.ExecuteContext(context.Background())
	return out.String(), err
}

// writeFile writes content to a file in a temp dir and returns its path.
func writeFile(t *testing.T, content string) string {
	p := filepath.Join(t.TempDir(), "settings.json")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestAdminTenants: each tenants command sends its call with the platform secret
// and no other credential (the admin secret of the environment is not sent), and
// prints the answer as JSON.
func TestAdminTenants(t *testing.T) {
	rec, url := tenantServer(t)
	t.Setenv("COFFER_PLATFORM_SECRET", "plat")
	t.Setenv("COFFER_ADMIN_SECRET", "tenant-admin")
	for _, tc := range []struct {
		args  []string
		calls string
		out   string
	}{
		{[]string{"get", "acme"}, "Get", `"id":"acme"`},
		{[]string{"list", "--page-size", "5", "--page-token", "t0"}, "List", `"nextPageToken":"tok"`},
		{[]string{"suspend", "acme"}, "Suspend", `"adminSecretsCount":1`},
		{[]string{"resume", "acme"}, "Resume", `"state":"TENANT_STATE_ACTIVE"`},
		{[]string{"delete", "acme"}, "Delete", "{}"},
		{[]string{"usage", "acme"}, "Usage", `"bytes":77`},
	} {
		out, err := runAdmin(t, url, append([]string{"tenants"}, tc.args...)...)
		calls, msgs, hdr := rec.take()
		// compare without spaces
		if err != nil || calls != tc.calls || !strings.Contains(strings.Join(strings.Fields(out), ""), tc.out) {
			t.Fatalf("%v: calls %s, err %v, out %s", tc.args, calls, err, out)
		}
		if hdr.Get("X-Coffer-Platform-Secret") != "plat" || hdr.Get("X-Hasura-Admin-Secret") != "" || hdr.Get("Authorization") != "" {
			t.Fatalf("%v: headers %v", tc.args, hdr)
		}
		if l, ok := msgs[0].(*adminv1.ListTenantsRequest); ok && (l.GetPageSize() != 5 || l.GetPageToken() != "t0") {
			t.Fatalf("list sent %v", l)
		}
	}
	out, err := runAdmin(t, url, "--output", "table", "tenants", "list")
	if err != nil || !strings.Contains(strings.Join(strings.Fields(out), " "), "acme active acme.test 100 10 1 shared") ||
		!strings.Contains(out, "next page: --page-token tok") {
		t.Fatalf("table: %v\n%s", err, out)
	}
	_, err = runAdmin(t, url, "tenants", "get", "nope")
	if err == nil || err.Error() != "not_found: no tenant nope" {
		t.Fatalf("error %v", err)
	}
	rec.take()
	t.Setenv("COFFER_PLATFORM_SECRET", "")
	_, err = runAdmin(t, url, "tenants", "list")
	if calls, _, _ := rec.take(); err == nil || !strings.Contains(err.Error(), "--platform-secret") || calls != "" {
		t.Fatalf("without the platform secret: %v, calls %q", err, calls)
	}
}

// TestAdminTenantsWrite: create sends the settings file with the flags over it;
// update sends only what is given, reading the tenant first where a flag changes
// part of a message the call replaces whole.
func TestAdminTenantsWrite(t *testing.T) {
	rec, url := tenantServer(t)
	t.Setenv("COFFER_PLATFORM_SECRET", "plat")
	file := writeFile(t, `{"adminSecrets":["from-file"],"storage":{"kind":"s3","bucket":"b"},"limits":{"requestsPerSecond":50}}`)
	_, err := runAdmin(t, url, "tenants", "create", "acme", "--host", "a.test", "--host", "*.b.test", "--settings", file,
		"--tenant-admin-secret", "s,1", "--tenant-admin-secret", "s2", "--max-bytes", "1000")
	calls, msgs, _ := rec.take()
	want := &adminv1.CreateTenantRequest{Id: "acme", Hosts: []string{"a.test", "*.b.test"}, Quota: &adminv1.Quota{MaxBytes: 1000},
		Settings: &adminv1.TenantSettings{AdminSecrets: []string{"s,1", "s2"}, Storage: &adminv1.TenantStorage{Kind: "s3", Bucket: "b"},
			Limits: &adminv1.TenantLimits{RequestsPerSecond: 50}}}
	if err != nil || calls != "Create" || !proto.Equal(msgs[0], want) {
		t.Fatalf("create: %v, %s %v", err, calls, msgs)
	}
	cur := acme()
	for _, tc := range []struct {
		args  []string
		calls string
		want  *adminv1.UpdateTenantRequest
	}{
		{[]string{"--host", "c.test"}, "Update", &adminv1.UpdateTenantRequest{Id: "acme", Hosts: &adminv1.Hosts{Hosts: []string{"c.test"}}}},
		{[]string{"--jwt", "{}"}, "Get,Update", &adminv1.UpdateTenantRequest{Id: "acme", Settings: &adminv1.TenantSettings{
			AdminSecretsCount: 1, Limits: cur.Settings.Limits, Jwt: "{}"}}},
		{[]string{"--unauthorized-role", "guest"}, "Get,Update", &adminv1.UpdateTenantRequest{Id: "acme", Settings: &adminv1.TenantSettings{
			AdminSecretsCount: 1, Limits: cur.Settings.Limits, UnauthorizedRole: "guest"}}}, // the redacted JWT is not sent back
		{[]string{"--settings", file, "--presign-key", "k"}, "Update", &adminv1.UpdateTenantRequest{Id: "acme",
			Settings: &adminv1.TenantSettings{AdminSecrets: []string{"from-file"}, PresignKey: "k",
				Storage: want.Settings.Storage, Limits: want.Settings.Limits}}},
		{[]string{"--max-files", "5"}, "Get,Update", &adminv1.UpdateTenantRequest{Id: "acme", Quota: &adminv1.Quota{MaxBytes: 100, MaxFiles: 5}}},
		{[]string{"--max-files", "5", "--max-bytes", "0"}, "Update", &adminv1.UpdateTenantRequest{Id: "acme", Quota: &adminv1.Quota{MaxFiles: 5}}},
	} {
		_, err := runAdmin(t, url, append([]string{"tenants", "update", "acme"}, tc.args...)...)
		calls, msgs, _ := rec.take()
		if err != nil || calls != tc.calls || !proto.Equal(msgs[len(msgs)-1], tc.want) {
			t.Fatalf("update %v: %v, %s %v", tc.args, err, calls, msgs)
		}
	}
	bad := writeFile(t, `{"adminSecret":"typo"}`)
	if _, err := runAdmin(t, url, "tenants", "create", "x", "--settings", bad); err == nil || !strings.Contains(err.Error(), "adminSecret") {
		t.Fatalf("a misspelt settings file: %v", err)
	}
	if calls, _, _ := rec.take(); calls != "" {
		t.Fatalf("a misspelt settings file was sent: %s", calls)
	}
}
