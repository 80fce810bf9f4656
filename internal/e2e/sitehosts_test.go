package e2e

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"connectrpc.com/connect"

	adminv1 "github.com/coffer/coffer/proto/gen/coffer/admin/v1"
	"github.com/coffer/coffer/proto/gen/coffer/admin/v1/adminv1connect"
)

// TestSiteHostsReserved: against the built binary with tenants, wildcards and the
// path prefix, tenant alpha's admin cannot make a site on any kind of host the
// server answers on itself (a wildcard name of an existing tenant and of one not
// made yet, the default and /t/{id}/ host, each IP literal, another tenant's
// host), each refusal naming the conflict; the platform cannot give a tenant a
// site's host; and beta's /v1, RPC and console answer as before on every way in.
func TestSiteHostsReserved(t *testing.T) {
	p := start(t, append(tenantEnv(), "COFFER_DATA_DIR="+t.TempDir(), "COFFER_TENANT_WILDCARDS=*.w.test")...)
	alpha := &tenantSide{id: "alpha", host: "alpha.test", adminSecret: "alpha-admin-secret-0123", jwtKey: strings.Repeat("a", 32), onlyBucket: "alpha-only"}
	beta := &tenantSide{id: "beta", host: "beta.test", adminSecret: "beta-admin-secret-01234", jwtKey: strings.Repeat("b", 32), onlyBucket: "beta-only"}
	setUpTenant(t, p, alpha)
	setUpTenant(t, p, beta)
	ctx := context.Background()
	sites := adminv1connect.NewSiteServiceClient(http.DefaultClient, p.url, connect.WithInterceptors(headerInterceptor{
		"X-Hasura-Admin-Secret": alpha.adminSecret, "Host": alpha.host}))
	siteOn := func(id string, hosts ...string) *adminv1.Site {
		return &adminv1.Site{Id: id, Hosts: hosts, Routes: []*adminv1.Route{{Path: "/*",
			Target: &adminv1.Target{Kind: &adminv1.Target_Bucket{Bucket: &adminv1.BucketTarget{Id: "avatars"}}}}}}
	}
	listen := strings.TrimPrefix(p.url, "http://")
	n := 0
	for host, word := range map[string]string{
		"beta.w.test": "wildcard", "not-yet.w.test": "wildcard", "default.test": "default tenant",
		"127.0.0.1": "IP address", "[::1]": "IP address", listen: "IP address", "beta.test": "tenant",
	} {
		n++ // a site id and other host of its own: one accepted claim does not hide the next
		_, err := sites.CreateSite(ctx, connect.NewRequest(&adminv1.CreateSiteRequest{Site: siteOn(fmt.Sprint("claim-", n), fmt.Sprint("fine-", n, ".site.test"), host)}))
		if connect.CodeOf(err) != connect.CodeAlreadyExists || !strings.Contains(err.Error(), word) {
			t.Errorf("a site on %s: %v, want already_exists naming %q", host, err, word)
		}
	}
	if _, err := sites.CreateSite(ctx, connect.NewRequest(&adminv1.CreateSiteRequest{Site: siteOn("shop", "shop.site.test")})); err != nil {
		t.Fatal(err)
	}
	_, err := tenantClient(p).CreateTenant(ctx, connect.NewRequest(&adminv1.CreateTenantRequest{Id: "gamma", Hosts: []string{"shop.site.test"}}))
	if connect.CodeOf(err) != connect.CodeAlreadyExists || !strings.Contains(err.Error(), "site") {
		t.Errorf("a tenant on a site's host: %v", err)
	}
	_, err = tenantClient(p).UpdateTenant(ctx, connect.NewRequest(&adminv1.UpdateTenantRequest{Id: beta.id,
		Hosts: &adminv1.Hosts{Hosts: []string{beta.host, "shop.site.test"}}}))
	if connect.CodeOf(err) != connect.CodeAlreadyExists || !strings.Contains(err.Error(), "site") {
		t.Errorf("tenant beta given a site's host: %v", err)
	}
	admin := []string{"X-Hasura-Admin-Secret", beta.adminSecret}
	for _, way := range []struct{ host, prefix string }{{beta.host, ""}, {"beta.w.test", ""}, {"default.test", "/t/beta"}} {
		if a := hit(t, p, way.host, "GET", way.prefix+"/v1/files/"+beta.fileID, nil, admin...); a.status != http.StatusOK || a.body != "bytes of beta" {
			t.Errorf("beta's file via %s%s: %+v", way.host, way.prefix, a)
		}
		rpc := hit(t, p, way.host, "POST", way.prefix+"/coffer.admin.v1.BucketService/GetBucket", []byte(`{"id":"`+beta.onlyBucket+`"}`),
			append(admin, "Content-Type", "application/json")...)
		if rpc.status != http.StatusOK || !strings.Contains(rpc.body, beta.onlyBucket) {
			t.Errorf("beta's RPC via %s%s: %+v", way.host, way.prefix, rpc)
		}
		if c := hit(t, p, way.host, "GET", way.prefix+"/console/", nil); c.status != http.StatusOK || !strings.Contains(c.body, "<html") {
			t.Errorf("beta's console via %s%s: %d", way.host, way.prefix, c.status)
		}
	}
}
