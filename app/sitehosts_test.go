package app

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/site"
	"github.com/coffer/coffer/tenant"
)

// TestTenantWinsSiteHost: a site made on a host before it became a tenant's (here:
// a --tenant-wildcards pattern added later) no longer answers there; the tenant
// does, and the site's other hosts still serve the site.
func TestTenantWinsSiteHost(t *testing.T) {
	c := tenantTestConfig(t)
	first, err := New(context.Background(), c, Parts{}, discard())
	if err != nil {
		t.Fatal(err)
	}
	addTenant(t, first, "x", "x.test", "x-admin-secret-0123456")
	www := func() *site.Document { // a new one each time: the admin normalizes and seals what it is given
		return &site.Document{ID: "www", Hosts: []string{"x.late.test", "www.site.test"},
			Routes: []site.Route{{Path: "/*", Target: site.Target{Redirect: &site.Redirect{To: "/elsewhere/", Status: 302}}}}}
	}
	if _, err := first.sites.Admin("x").CreateSite(context.Background(), www()); err != nil {
		t.Fatal(err)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	c.Tenants.Wildcards = []string{"*.late.test"} // the restart with the flag
	m, base := startMain(t, c)
	noFollow := func(host string) int {
		req, _ := http.NewRequest("GET", base+"/v1/version", nil)
		req.Host = host
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := noFollow("x.late.test"); got != http.StatusOK {
		t.Errorf("x.late.test is tenant x's now: %d, want x's /v1/version 200", got)
	}
	if got := noFollow("www.site.test"); got != http.StatusFound {
		t.Errorf("the site's other host: %d, want 302", got)
	}
	_, err = m.sites.Admin("x").UpdateSite(context.Background(), "www", www())
	if err == nil || !strings.Contains(err.Error(), "wildcard") {
		t.Errorf("updating the site with the tenant's name: %v, want a refusal naming the wildcard", err)
	}
}

// startMain builds and starts a server from c, stopped when the test ends, and
// returns it with its base URL.
func startMain(t *testing.T, c Config) (*Main, string) {
	t.Helper()
	m, err := New(context.Background(), c, Parts{}, discard())
	if err != nil {
		t.Fatal(err)
	}
	stop, err := m.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stop() })
	return m, "http://" + m.Addr().String()
}

// TestSiteOverTenantLimit: a site of a tenant with a request limit is refused past
// it as the tenant's API is: 429 with Retry-After, in the sites' plain text.
func TestSiteOverTenantLimit(t *testing.T) {
	m, base := startMain(t, tenantTestConfig(t))
	s := &tenant.Settings{AdminSecrets: []string{"limited-secret-0123456"}, Limits: tenant.Limits{RequestsPerSecond: 0.01, Burst: 1}}
	if err := s.Prepare(m.tenancy.Sealer(), "lim"); err != nil {
		t.Fatal(err)
	}
	doc, _ := json.Marshal(s)
	ctx := context.Background()
	if err := m.tenancy.Registry().CreateTenant(ctx, &coffer.Tenant{ID: "lim", Hosts: []string{"lim.test"}, Settings: doc, State: coffer.TenantActive}); err != nil {
		t.Fatal(err)
	}
	if err := m.tenancy.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	www := &site.Document{ID: "www", Hosts: []string{"www.lim-site.test"},
		Routes: []site.Route{{Path: "/*", Target: site.Target{Redirect: &site.Redirect{To: "/elsewhere/", Status: 302}}}}}
	if _, err := m.sites.Admin("lim").CreateSite(ctx, www); err != nil {
		t.Fatal(err)
	}
	get := func() *http.Response {
		req, _ := http.NewRequest("GET", base+"/a", nil)
		req.Host = "www.lim-site.test"
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		resp.Header.Set("X-Test-Body", string(body))
		return resp
	}
	if r := get(); r.StatusCode != http.StatusFound {
		t.Fatalf("first request: %d, want the site's 302", r.StatusCode)
	}
	r := get()
	if r.StatusCode != http.StatusTooManyRequests || r.Header.Get("Retry-After") == "" ||
		!strings.HasPrefix(r.Header.Get("Content-Type"), "text/plain") || r.Header.Get("X-Test-Body") == "" {
		t.Errorf("over the limit: %d %q, Retry-After %q, body %q; want 429 in plain text with Retry-After",
			r.StatusCode, r.Header.Get("Content-Type"), r.Header.Get("Retry-After"), r.Header.Get("X-Test-Body"))
	}
}
