package rpcapi_test

import (
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/timestamppb"

	adminv1 "github.com/coffer/coffer/proto/gen/coffer/admin/v1"
	"github.com/coffer/coffer/proto/gen/coffer/admin/v1/adminv1connect"
	"github.com/coffer/coffer/rpcapi"
	"github.com/coffer/coffer/site/audit"
)

// siteCalls are every SiteService method, by name, with well-formed arguments.
func siteCalls(c adminv1connect.SiteServiceClient) map[string]func() error {
	return map[string]func() error{
		"CreateSite": func() error {
			return errOf(c.CreateSite(ctx(), req(&adminv1.CreateSiteRequest{Site: fullSitePB("sneaky")})))
		},
		"GetSite":   func() error { return errOf(c.GetSite(ctx(), req(&adminv1.GetSiteRequest{Id: "www"}))) },
		"ListSites": func() error { return errOf(c.ListSites(ctx(), req(&adminv1.ListSitesRequest{}))) },
		"UpdateSite": func() error {
			return errOf(c.UpdateSite(ctx(), req(&adminv1.UpdateSiteRequest{Id: "www", Site: fullSitePB("www")})))
		},
		"DeleteSite":   func() error { return errOf(c.DeleteSite(ctx(), req(&adminv1.DeleteSiteRequest{Id: "www"}))) },
		"PurgeSite":    func() error { return errOf(c.PurgeSite(ctx(), req(&adminv1.PurgeSiteRequest{SiteId: "www"}))) },
		"GetSiteStats": func() error { return errOf(c.GetSiteStats(ctx(), req(&adminv1.GetSiteStatsRequest{SiteId: "www"}))) },
	}
}

// TestSiteServiceRefusals: only the tenant's admin manages its sites: no
// credential, a wrong admin secret or the platform secret alone UNAUTHENTICATED, a
// user JWT PERMISSION_DENIED, before the server is called; the admin then still
// finds the site unchanged.
func TestSiteServiceRefusals(t *testing.T) {
	e := newSiteEnv(t, func(c *rpcapi.Config) { c.Tenants, c.PlatformSecret = newFakeTenants(), platformSecret })
	admin := siteClient(e.base, "X-Hasura-Admin-Secret", adminSecret)
	_, err := admin.CreateSite(ctx(), req(&adminv1.CreateSiteRequest{Site: fullSitePB("www")}))
	check(t, "CreateSite", err)
	before := e.sites.calls.Load()
	for _, tc := range []struct {
		name string
		c    adminv1connect.SiteServiceClient
		code connect.Code
	}{
		{"anonymous", siteClient(e.base), connect.CodeUnauthenticated},
		{"wrong admin secret", siteClient(e.base, "X-Hasura-Admin-Secret", "nope"), connect.CodeUnauthenticated},
		{"platform secret", siteClient(e.base, rpcapi.HeaderPlatformSecret, platformSecret), connect.CodeUnauthenticated},
		{"user JWT", siteClient(e.base, "Authorization", "Bearer "+token(t, "user", "alice")), connect.CodePermissionDenied},
	} {
		for what, call := range siteCalls(tc.c) {
			wantCode(t, tc.name+" "+what, call(), tc.code)
		}
	}
	if n := e.sites.calls.Load(); n != before {
		t.Errorf("refused calls reached the server (%d calls)", n-before)
	}
	got, err := admin.GetSite(ctx(), req(&adminv1.GetSiteRequest{Id: "www"}))
	check(t, "GetSite", err)
	if len(got.Msg.GetSite().GetHosts()) != 1 {
		t.Errorf("the site changed: %v", got.Msg)
	}
	admin2 := siteClient(e.base, "Authorization", "Bearer "+token(t, "admin", "root"))
	_, err = admin2.ListSites(ctx(), req(&adminv1.ListSitesRequest{}))
	check(t, "ListSites with a JWT of role admin", err)
}

// TestSiteServiceOff: a face without Config.Sites refuses the admin's calls with
// FAILED_PRECONDITION, and others' as ever.
func TestSiteServiceOff(t *testing.T) {
	e := newSiteEnv(t, func(c *rpcapi.Config) { c.Sites = nil })
	for what, call := range siteCalls(siteClient(e.base, "X-Hasura-Admin-Secret", adminSecret)) {
		wantCode(t, "admin "+what, call(), connect.CodeFailedPrecondition)
	}
	for what, call := range siteCalls(siteClient(e.base)) {
		wantCode(t, "anonymous "+what, call(), connect.CodeUnauthenticated)
	}
}

// auditClient is AuditService's client at base, sending hdr (key, value pairs).
func auditClient(base string, hdr ...string) adminv1connect.AuditServiceClient {
	return adminv1connect.NewAuditServiceClient(httpClient(hdr...), base)
}

// TestAuditTenants: a tenant's admin reads its own tenant's records (named or
// not), never another's (PERMISSION_DENIED, before the log is read); the platform
// secret reads any tenant's on the platform's hosts and nothing on a tenant's.
func TestAuditTenants(t *testing.T) {
	tenantHost := newSiteEnv(t, func(c *rpcapi.Config) { c.TenantHost, c.Tenant = true, "acme" })
	platform := newSiteEnv(t, func(c *rpcapi.Config) { c.Tenants, c.PlatformSecret = newFakeTenants(), platformSecret })
	for _, tc := range []struct {
		name   string
		e      *siteEnv
		c      adminv1connect.AuditServiceClient
		tenant string
		code   connect.Code // 0: allowed
		want   string       // the tenant read
	}{
		{"tenant admin", tenantHost, auditClient(tenantHost.base, "X-Hasura-Admin-Secret", adminSecret), "", 0, "acme"},
		{"tenant admin naming itself", tenantHost, auditClient(tenantHost.base, "X-Hasura-Admin-Secret", adminSecret), "acme", 0, "acme"},
		{"tenant admin naming another", tenantHost, auditClient(tenantHost.base, "X-Hasura-Admin-Secret", adminSecret), "beta", connect.CodePermissionDenied, ""},
		{"platform secret on a tenant host", tenantHost, auditClient(tenantHost.base, rpcapi.HeaderPlatformSecret, platformSecret), "beta", connect.CodePermissionDenied, ""},
		{"user JWT", tenantHost, auditClient(tenantHost.base, "Authorization", "Bearer "+token(t, "user", "alice")), "", connect.CodePermissionDenied, ""},
		{"anonymous", tenantHost, auditClient(tenantHost.base), "", connect.CodeUnauthenticated, ""},
		{"default admin", platform, auditClient(platform.base, "X-Hasura-Admin-Secret", adminSecret), "", 0, ""},
		{"default admin naming a tenant", platform, auditClient(platform.base, "X-Hasura-Admin-Secret", adminSecret), "beta", connect.CodePermissionDenied, ""},
		{"platform secret", platform, auditClient(platform.base, rpcapi.HeaderPlatformSecret, platformSecret), "beta", 0, "beta"},
		{"platform secret, default tenant", platform, auditClient(platform.base, rpcapi.HeaderPlatformSecret, platformSecret), "", 0, ""},
		{"wrong platform secret", platform, auditClient(platform.base, rpcapi.HeaderPlatformSecret, "nope"), "beta", connect.CodeUnauthenticated, ""},
	} {
		before := tc.e.audit.calls.Load()
		res, err := tc.c.QueryAudit(ctx(), req(&adminv1.QueryAuditRequest{Tenant: tc.tenant}))
		if tc.code != 0 {
			wantCode(t, tc.name, err, tc.code)
			if tc.e.audit.calls.Load() != before {
				t.Errorf("%s: the refused query reached the log", tc.name)
			}
			continue
		}
		check(t, tc.name, err)
		asked := tc.e.audit.tenants[len(tc.e.audit.tenants)-1]
		if r := res.Msg.GetRecords(); asked != tc.want || len(r) != 1 || r[0].GetTenant() != tc.want {
			t.Errorf("%s: read tenant %q (%v), want %q", tc.name, asked, res.Msg, tc.want)
		}
	}
}

// TestAuditFilter: the filter reaches the log converted (cache upper-cased, limit
// 0 as 100), the records come back field for field, and bad filters are
// INVALID_ARGUMENT naming their field; a server without a log FAILED_PRECONDITION.
func TestAuditFilter(t *testing.T) {
	e := newSiteEnv(t, nil)
	c := auditClient(e.base, "X-Hasura-Admin-Secret", adminSecret)
	since, until := time.Date(2026, 11, 25, 5, 0, 0, 0, time.UTC), time.Date(2026, 11, 25, 7, 0, 0, 0, time.UTC)
	res, err := c.QueryAudit(ctx(), req(&adminv1.QueryAuditRequest{Site: "www", Host: "www.example.com",
		Path: "/assets/*", Since: timestamppb.New(since), Until: timestamppb.New(until), Status: 200, Cache: "hit"}))
	check(t, "QueryAudit", err)
	want := audit.Filter{Site: "www", Host: "www.example.com", Path: "/assets/*", Since: since, Until: until,
		Status: 200, Cache: "HIT", Limit: 100}
	if got := e.audit.filters[0]; got != want {
		t.Errorf("filter passed %+v\nwant          %+v", got, want)
	}
	r := res.Msg.GetRecords()[0]
	if !r.GetTime().AsTime().Equal(time.Date(2026, 11, 25, 6, 1, 2, 0, time.UTC)) || r.GetSite() != "www" ||
		r.GetHost() != "www.example.com" || r.GetMethod() != "GET" || r.GetPath() != "/assets/a.js" ||
		r.GetTarget() != "bucket:public" || r.GetStatus() != 200 || r.GetBytes() != 1234 || r.GetDurationMs() != 1.5 ||
		r.GetCache() != "HIT" || r.GetClient() != "127.0.0.1" || r.GetUserId() != "u1" || r.GetRequestId() != "r1" {
		t.Errorf("record %v", r)
	}
	for _, tc := range []struct {
		field string
		r     *adminv1.QueryAuditRequest
	}{
		{"limit", &adminv1.QueryAuditRequest{Limit: 10001}},
		{"limit", &adminv1.QueryAuditRequest{Limit: -1}},
		{"status", &adminv1.QueryAuditRequest{Status: 99}},
		{"cache", &adminv1.QueryAuditRequest{Cache: "WARM"}},
		{"since", &adminv1.QueryAuditRequest{Since: timestamppb.New(until), Until: timestamppb.New(since)}},
		{"until", &adminv1.QueryAuditRequest{Until: &timestamppb.Timestamp{Nanos: -1}}},
		{"path", &adminv1.QueryAuditRequest{Path: string(make([]byte, 4097))}},
	} {
		_, err := c.QueryAudit(ctx(), req(tc.r))
		wantField(t, "QueryAudit "+tc.field, err, tc.field)
	}
	if n := e.audit.calls.Load(); n != 1 {
		t.Errorf("refused queries reached the log (%d calls)", n-1)
	}
	off := newSiteEnv(t, func(c *rpcapi.Config) { c.Audit = nil })
	_, err = auditClient(off.base, "X-Hasura-Admin-Secret", adminSecret).QueryAudit(ctx(), req(&adminv1.QueryAuditRequest{}))
	wantCode(t, "QueryAudit without a log", err, connect.CodeFailedPrecondition)
}
