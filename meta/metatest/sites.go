package metatest

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/meta"
)

// SiteStore is a shared store with sites (both SQL stores): tenants' views offer
// meta.Sites, the store meta.SiteRegistry.
type SiteStore interface {
	Shared
	meta.SiteRegistry
}

// siteTests run against a fresh, migrated SiteStore.
var siteTests = []struct {
	name string
	fn   func(t *testing.T, s SiteStore)
}{
	{"CRUD", testSitesCRUD},
	{"Order", testSitesOrder},
	{"HostConflicts", testSiteHostConflicts},
	{"TenantHosts", testSiteTenantHosts},
	{"Isolation", testSitesIsolation},
	{"AllSites", testAllSites},
	{"Purge", testSitesPurge},
	{"HostRace", testSiteHostRace},
}

// RunSites runs the sites suite (meta.Sites on tenants' views, the default tenant's
// included, and meta.SiteRegistry). newStore is as for RunTenants.
func RunSites(t *testing.T, newStore func(t *testing.T) SiteStore) {
	for _, tt := range siteTests {
		t.Run(tt.name, func(t *testing.T) { tt.fn(t, newStore(t)) })
	}
}

// sites returns tenant id's view of s as meta.Sites, failing t unless it is one and
// unless it hides the registries.
func sites(t *testing.T, s SiteStore, id string) meta.Sites {
	t.Helper()
	v, ok := s.ForTenant(id).(meta.Sites)
	if !ok {
		t.Fatalf("ForTenant(%q) is %T: not a meta.Sites", id, s.ForTenant(id))
	}
	if _, ok := v.(meta.SiteRegistry); ok {
		t.Errorf("ForTenant(%q) offers meta.SiteRegistry: a tenant's view must not", id)
	}
	return v
}

// mustSite creates site id with hosts and a document naming it in v.
func mustSite(t *testing.T, v meta.Sites, id string, hosts ...string) *coffer.Site {
	t.Helper()
	st := &coffer.Site{ID: id, Hosts: hosts, Doc: []byte(`{"id": "` + id + `"}`)}
	must(t, v.CreateSite(t.Context(), st))
	return st
}

// checkSite compares every field of got with want (times with Equal).
func checkSite(t *testing.T, got, want *coffer.Site) {
	t.Helper()
	checkRow(t, "site "+want.ID, got, want, func(st *coffer.Site) []*time.Time {
		return []*time.Time{&st.CreatedAt, &st.UpdatedAt}
	})
}

// testSitesCRUD: create, get, update and delete, on the default tenant's view and on
// a tenant's; documents are kept byte for byte; a deleted site's hosts are free.
func testSitesCRUD(t *testing.T, s SiteStore) {
	mustTenant(t, s, "t1")
	for _, id := range []string{coffer.DefaultTenantID, "t1"} {
		t.Run("tenant="+id, func(t *testing.T) { siteCRUD(t, sites(t, s, id), id) })
	}
}

// siteCRUD runs the CRUD checks on v, tenant's view; hosts are named after tenant.
func siteCRUD(t *testing.T, v meta.Sites, tenant string) {
	ctx := t.Context()
	h := func(n string) string { return n + "." + tenant + "site.example" }
	st := &coffer.Site{ID: "www", Hosts: []string{h("b"), h("a"), h("b")}, Doc: []byte(` {"id": "www"} `)}
	must(t, v.CreateSite(ctx, st))
	if st.TenantID != tenant || !slices.Equal(st.Hosts, []string{h("a"), h("b")}) || string(st.Doc) != ` {"id": "www"} ` {
		t.Fatalf("created %+v: want tenant %q, hosts sorted without repeats, the document as given", st, tenant)
	}
	checkTime(t, "CreatedAt", st.CreatedAt)
	if !st.UpdatedAt.Equal(st.CreatedAt) {
		t.Errorf("UpdatedAt %v != CreatedAt %v", st.UpdatedAt, st.CreatedAt)
	}
	wantCode(t, v.CreateSite(ctx, &coffer.Site{ID: "www", Hosts: []string{h("c")}}), coffer.ECONFLICT)
	got, err := v.GetSite(ctx, "www")
	must(t, err)
	checkSite(t, got, st)
	_, err = v.GetSite(ctx, "nope")
	wantCode(t, err, coffer.ENOTFOUND)

	up, err := v.UpdateSite(ctx, "www", []string{h("c"), h("a")}, nil)
	must(t, err)
	if !slices.Equal(up.Hosts, []string{h("a"), h("c")}) || up.Doc == nil || len(up.Doc) != 0 ||
		up.UpdatedAt.Before(st.UpdatedAt) || !up.CreatedAt.Equal(st.CreatedAt) || up.TenantID != tenant {
		t.Errorf("updated %+v", up)
	}
	got, err = v.GetSite(ctx, "www")
	must(t, err)
	checkSite(t, got, up)
	_, err = v.UpdateSite(ctx, "nope", nil, []byte(`{}`))
	wantCode(t, err, coffer.ENOTFOUND)

	must(t, v.DeleteSite(ctx, "www"))
	wantCode(t, v.DeleteSite(ctx, "www"), coffer.ENOTFOUND)
	_, err = v.GetSite(ctx, "www")
	wantCode(t, err, coffer.ENOTFOUND)
	mustSite(t, v, "again", h("a"), h("c")) // the deleted site's hosts are free
}

// testSitesOrder: ListSites orders by id, each with its hosts; empty is not nil.
func testSitesOrder(t *testing.T, s SiteStore) {
	v := sites(t, s, coffer.DefaultTenantID)
	list, err := v.ListSites(t.Context())
	must(t, err)
	if list == nil || len(list) != 0 {
		t.Fatalf("ListSites of none = %#v, want empty", list)
	}
	want := []*coffer.Site{
		mustSite(t, v, "c", "c2.example", "c1.example"), mustSite(t, v, "a"),
		mustSite(t, v, "b-1", "b.example"), mustSite(t, v, "b"),
	}
	slices.SortFunc(want, func(a, b *coffer.Site) int { return strings.Compare(a.ID, b.ID) })
	list, err = v.ListSites(t.Context())
	must(t, err)
	checkSites(t, "ListSites", list, want)
}

// checkSites compares the sites of a list with want's, in order.
func checkSites(t *testing.T, what string, got, want []*coffer.Site) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s = %d sites, want %d", what, len(got), len(want))
	}
	for i := range want {
		checkSite(t, got[i], want[i])
	}
}

// testSiteHostConflicts: a host belongs to one site of one tenant: creating or
// updating onto a taken host is ECONFLICT naming it, with nothing changed.
func testSiteHostConflicts(t *testing.T, s SiteStore) {
	ctx := t.Context()
	mustTenant(t, s, "t1")
	mustTenant(t, s, "t2")
	t1, t2, def := sites(t, s, "t1"), sites(t, s, "t2"), sites(t, s, coffer.DefaultTenantID)
	a := mustSite(t, t1, "a", "a.example")
	for _, c := range []struct {
		name string
		v    meta.Sites
		id   string
	}{{"same tenant", t1, "b"}, {"other tenant", t2, "a"}, {"default tenant", def, "x"}} {
		err := c.v.CreateSite(ctx, &coffer.Site{ID: c.id, Hosts: []string{"free.example", "a.example"}})
		wantHostConflict(t, c.name, err, "a.example")
		_, err = c.v.GetSite(ctx, c.id)
		wantCode(t, err, coffer.ENOTFOUND)
	}
	b := mustSite(t, t2, "b", "b.example")
	_, err := t2.UpdateSite(ctx, "b", []string{"b.example", "a.example"}, []byte(`{}`))
	wantHostConflict(t, "update", err, "a.example")
	got, err := t2.GetSite(ctx, "b")
	must(t, err)
	checkSite(t, got, b)
	_, err = t1.UpdateSite(ctx, "a", []string{"a2.example"}, a.Doc) // gives a.example up
	must(t, err)
	_, err = t2.UpdateSite(ctx, "b", []string{"b.example", "a.example"}, b.Doc)
	must(t, err)
}

// wantHostConflict fails t unless err is ECONFLICT naming host.
func wantHostConflict(t *testing.T, what string, err error, host string) {
	t.Helper()
	wantCode(t, err, coffer.ECONFLICT)
	if !strings.Contains(err.Error(), `"`+host+`"`) {
		t.Errorf("%s: conflict %q does not name the host %q", what, err, host)
	}
}

// testSiteTenantHosts: a tenant's API host is never a site's, and a site's host
// never a tenant's, on create and update of either.
func testSiteTenantHosts(t *testing.T, s SiteStore) {
	ctx := t.Context()
	mustTenant(t, s, "t1") // API host t1.example
	v := sites(t, s, "t1")
	err := v.CreateSite(ctx, &coffer.Site{ID: "w", Hosts: []string{"t1.example"}})
	wantHostConflict(t, "site onto a tenant host", err, "t1.example")
	mustSite(t, v, "w", "w.example")
	_, err = v.UpdateSite(ctx, "w", []string{"t1.example"}, nil)
	wantHostConflict(t, "site update onto a tenant host", err, "t1.example")

	err = s.CreateTenant(ctx, &coffer.Tenant{ID: "t2", Hosts: []string{"t2.example", "w.example"}})
	wantHostConflict(t, "tenant onto a site host", err, "w.example")
	_, err = s.GetTenant(ctx, "t2")
	wantCode(t, err, coffer.ENOTFOUND)
	hosts := []string{"t1.example", "w.example"}
	_, err = s.UpdateTenant(ctx, "t1", coffer.TenantUpdate{Hosts: &hosts})
	wantHostConflict(t, "tenant update onto a site host", err, "w.example")
	tn, err := s.GetTenant(ctx, "t1")
	must(t, err)
	if !slices.Equal(tn.Hosts, []string{"t1.example"}) {
		t.Errorf("tenant hosts after a refused update: %v", tn.Hosts)
	}
}

// testSitesIsolation: another tenant's site answers as a missing one, and site ids
// are unique per tenant only.
func testSitesIsolation(t *testing.T, s SiteStore) {
	ctx := t.Context()
	mustTenant(t, s, "a")
	mustTenant(t, s, "b")
	va := sites(t, s, "a")
	www := mustSite(t, va, "www", "www.a.example")
	for _, id := range []string{"b", coffer.DefaultTenantID} {
		v := sites(t, s, id)
		_, err := v.GetSite(ctx, "www")
		wantCode(t, err, coffer.ENOTFOUND)
		_, err = v.UpdateSite(ctx, "www", []string{"stolen.example"}, []byte(`{}`))
		wantCode(t, err, coffer.ENOTFOUND)
		wantCode(t, v.DeleteSite(ctx, "www"), coffer.ENOTFOUND)
		list, err := v.ListSites(ctx)
		must(t, err)
		if len(list) != 0 {
			t.Errorf("tenant %q lists %d sites of another", id, len(list))
		}
	}
	own := mustSite(t, sites(t, s, "b"), "www", "www.b.example")
	got, err := va.GetSite(ctx, "www")
	must(t, err)
	checkSite(t, got, www)
	got, err = sites(t, s, "b").GetSite(ctx, "www")
	must(t, err)
	checkSite(t, got, own)
}

// testAllSites: every tenant's sites, ordered by (tenant, id), with their tenant.
func testAllSites(t *testing.T, s SiteStore) {
	all, err := s.AllSites(t.Context())
	must(t, err)
	if all == nil || len(all) != 0 {
		t.Fatalf("AllSites of none = %#v, want empty", all)
	}
	mustTenant(t, s, "b")
	mustTenant(t, s, "a")
	want := []*coffer.Site{
		mustSite(t, sites(t, s, coffer.DefaultTenantID), "www", "www.example"),
		mustSite(t, sites(t, s, "a"), "docs", "docs.a.example"),
		mustSite(t, sites(t, s, "a"), "www", "www.a.example", "a.example.org"),
	}
	want = append(want, mustSite(t, sites(t, s, "b"), "app"))
	all, err = s.AllSites(t.Context())
	must(t, err)
	checkSites(t, "AllSites", all, want)
}

// testSitesPurge: purging a tenant removes its sites and frees their hosts; another
// tenant keeps its own.
func testSitesPurge(t *testing.T, s SiteStore) {
	ctx := t.Context()
	mustTenant(t, s, "gone")
	mustTenant(t, s, "keep")
	mustSite(t, sites(t, s, "gone"), "www", "www.gone.example")
	mustSite(t, sites(t, s, "gone"), "docs", "docs.gone.example")
	kept := mustSite(t, sites(t, s, "keep"), "www", "www.keep.example")
	mustDeleting(t, s, "gone")
	for done := false; !done; {
		var err error
		_, done, err = s.PurgeTenant(ctx, "gone", 10)
		must(t, err)
	}
	all, err := s.AllSites(ctx)
	must(t, err)
	checkSites(t, "AllSites after the purge", all, []*coffer.Site{kept})
	mustSite(t, sites(t, s, "keep"), "taken", "www.gone.example", "docs.gone.example")
}

// testSiteHostRace: a tenant and a site that take the same host at the same time
// do not both get it (the store checks the other table and inserts as one step).
func testSiteHostRace(t *testing.T, s SiteStore) {
	ctx := t.Context()
	v := sites(t, s, coffer.DefaultTenantID)
	for i := range 40 {
		host := fmt.Sprintf("race%d.example", i)
		var wg sync.WaitGroup
		var tenantErr, siteErr error
		start := make(chan struct{})
		wg.Add(2)
		go func() {
			defer wg.Done()
			<-start
			tenantErr = s.CreateTenant(ctx, &coffer.Tenant{ID: fmt.Sprintf("race%d", i), Hosts: []string{host}})
		}()
		go func() {
			defer wg.Done()
			<-start
			siteErr = v.CreateSite(ctx, &coffer.Site{ID: fmt.Sprintf("race%d", i), Hosts: []string{host}})
		}()
		close(start)
		wg.Wait()
		if (tenantErr == nil) == (siteErr == nil) {
			t.Fatalf("host %s: tenant %v, site %v: want exactly one to take it", host, tenantErr, siteErr)
		}
		wantHostConflict(t, host, firstErr(tenantErr, siteErr), host)
	}
}

// firstErr returns the first non-nil error.
func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
