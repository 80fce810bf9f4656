package rpcapi_test

import (
	"slices"
	"strings"
	"testing"

	"connectrpc.com/connect"

	adminv1 "github.com/coffer/coffer/proto/gen/coffer/admin/v1"
	"github.com/coffer/coffer/proto/gen/coffer/admin/v1/adminv1connect"
	"github.com/coffer/coffer/site"
)

// TestSiteServiceMethods drives every SiteService method as the admin, through the
// generated client: documents reach the server as site.Document's JSON (secrets in
// clear, output-only fields dropped) and come back without secrets, saying which are
// set; errors keep their kinds.
func TestSiteServiceMethods(t *testing.T) {
	e := newSiteEnv(t, nil)
	c := siteClient(e.base, "X-Hasura-Admin-Secret", adminSecret)
	made, err := c.CreateSite(ctx(), req(&adminv1.CreateSiteRequest{Site: fullSitePB("www")}))
	check(t, "CreateSite", err)
	checkSecretFlags(t, "CreateSite", made.Msg.GetSite())
	if got := made.Msg.GetSite(); got.GetId() != "www" || got.GetCreatedAt().AsTime().Year() != 2026 {
		t.Errorf("created %v: want the server's id and times", got)
	}
	passed := e.sites.docs[0]
	for _, s := range []string{siteS3Secret, siteHookSecret, siteHeader, `"notFound":"/404.html"`} {
		if !strings.Contains(passed, s) {
			t.Errorf("the document passed lacks %s: %s", s, passed)
		}
	}
	for _, s := range []string{"createdAt", "updatedAt", "secretSet", "secretAccessKeySet"} {
		if strings.Contains(passed, s) {
			t.Errorf("the document passed holds output-only %s: %s", s, passed)
		}
	}
	_, err = c.CreateSite(ctx(), req(&adminv1.CreateSiteRequest{Site: fullSitePB("www")}))
	wantCode(t, "CreateSite again", err, connect.CodeAlreadyExists)
	_, err = c.CreateSite(ctx(), req(&adminv1.CreateSiteRequest{Site: fullSitePB("docs")}))
	check(t, "CreateSite docs", err)

	got, err := c.GetSite(ctx(), req(&adminv1.GetSiteRequest{Id: "www"}))
	check(t, "GetSite", err)
	checkSecretFlags(t, "GetSite", got.Msg.GetSite())
	_, err = c.GetSite(ctx(), req(&adminv1.GetSiteRequest{Id: "nope"}))
	wantCode(t, "GetSite nope", err, connect.CodeNotFound)
	list, err := c.ListSites(ctx(), req(&adminv1.ListSitesRequest{}))
	check(t, "ListSites", err)
	if s := list.Msg.GetSites(); len(s) != 2 || s[0].GetId() != "docs" || s[1].GetId() != "www" {
		t.Fatalf("ListSites = %v", list.Msg)
	}
	for _, s := range list.Msg.GetSites() {
		checkSecretFlags(t, "ListSites", s)
	}
	testSiteUpdate(t, e, c)
	testSitePurgeStats(t, e, c)
	_, err = c.DeleteSite(ctx(), req(&adminv1.DeleteSiteRequest{Id: "www"}))
	check(t, "DeleteSite", err)
	_, err = c.DeleteSite(ctx(), req(&adminv1.DeleteSiteRequest{Id: "www"}))
	wantCode(t, "DeleteSite again", err, connect.CodeNotFound)
}

// testSiteUpdate: the document's id is the request's (empty: set; another:
// INVALID_ARGUMENT, naming site.id, before the server is called).
func testSiteUpdate(t *testing.T, e *siteEnv, c adminv1connect.SiteServiceClient) {
	in := fullSitePB("")
	in.Hosts = []string{"new.example.com"}
	up, err := c.UpdateSite(ctx(), req(&adminv1.UpdateSiteRequest{Id: "www", Site: in}))
	check(t, "UpdateSite", err)
	if s := up.Msg.GetSite(); s.GetId() != "www" || !slices.Equal(s.GetHosts(), in.Hosts) {
		t.Errorf("updated %v", s)
	}
	checkSecretFlags(t, "UpdateSite", up.Msg.GetSite())
	if in.GetId() != "" || in.GetCreatedAt() == nil {
		t.Errorf("the face changed the request's message: %v", in)
	}
	calls := e.sites.calls.Load()
	_, err = c.UpdateSite(ctx(), req(&adminv1.UpdateSiteRequest{Id: "www", Site: fullSitePB("other")}))
	wantField(t, "UpdateSite with another id", err, "site.id")
	_, err = c.UpdateSite(ctx(), req(&adminv1.UpdateSiteRequest{Id: "www"}))
	wantCode(t, "UpdateSite without a site", err, connect.CodeInvalidArgument)
	_, err = c.UpdateSite(ctx(), req(&adminv1.UpdateSiteRequest{Site: fullSitePB("www")}))
	wantCode(t, "UpdateSite without an id", err, connect.CodeInvalidArgument)
	if n := e.sites.calls.Load(); n != calls {
		t.Errorf("refused updates reached the server (%d calls)", n-calls)
	}
	_, err = c.UpdateSite(ctx(), req(&adminv1.UpdateSiteRequest{Id: "nope", Site: fullSitePB("")}))
	wantCode(t, "UpdateSite nope", err, connect.CodeNotFound)
}

// testSitePurgeStats: a purge passes its lists and answers the server's counts;
// bad lists are refused; stats carry the hit ratio.
func testSitePurgeStats(t *testing.T, e *siteEnv, c adminv1connect.SiteServiceClient) {
	pr, err := c.PurgeSite(ctx(), req(&adminv1.PurgeSiteRequest{SiteId: "www", Paths: []string{"/index.html"},
		Prefixes: []string{"/assets/"}, Tags: []string{"v1", "v2"}}))
	check(t, "PurgeSite", err)
	want := site.Purge{Paths: []string{"/index.html"}, Prefixes: []string{"/assets/"}, Tags: []string{"v1", "v2"}}
	if pr.Msg.GetRemoved() != 4 || !pr.Msg.GetBroadcast() || len(e.sites.purges) != 1 ||
		!slices.Equal(e.sites.purges[0].Paths, want.Paths) || !slices.Equal(e.sites.purges[0].Prefixes, want.Prefixes) ||
		!slices.Equal(e.sites.purges[0].Tags, want.Tags) {
		t.Errorf("PurgeSite = %v, passed %+v", pr.Msg, e.sites.purges)
	}
	for name, r := range map[string]*adminv1.PurgeSiteRequest{
		"no site id":    {Paths: []string{"/"}},
		"empty path":    {SiteId: "www", Paths: []string{""}},
		"too many tags": {SiteId: "www", Tags: make([]string, 1001)},
		"long prefix":   {SiteId: "www", Prefixes: []string{strings.Repeat("a", 4097)}},
	} {
		_, err := c.PurgeSite(ctx(), req(r))
		wantCode(t, "PurgeSite "+name, err, connect.CodeInvalidArgument)
	}
	_, err = c.PurgeSite(ctx(), req(&adminv1.PurgeSiteRequest{SiteId: "nope"}))
	wantCode(t, "PurgeSite nope", err, connect.CodeNotFound)
	st, err := c.GetSiteStats(ctx(), req(&adminv1.GetSiteStatsRequest{SiteId: "www"}))
	check(t, "GetSiteStats", err)
	if m := st.Msg; m.GetRequests() != 100 || m.GetBytes() != 4096 || m.GetHits() != 60 || m.GetMisses() != 20 ||
		m.GetStale() != 10 || m.GetRevalidated() != 10 || m.GetHitRatio() != 0.8 {
		t.Errorf("GetSiteStats = %v, want hit ratio 80/100", m)
	}
	_, err = c.GetSiteStats(ctx(), req(&adminv1.GetSiteStatsRequest{SiteId: "nope"}))
	wantCode(t, "GetSiteStats nope", err, connect.CodeNotFound)
}
