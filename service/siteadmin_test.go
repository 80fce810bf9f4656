package service_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/meta"
	"github.com/coffer/coffer/service"
	"github.com/coffer/coffer/site"
	"github.com/coffer/coffer/tenant"
)

// fakeSiteRuntime is a service.SiteRuntime over a real store that counts what it is
// asked; "reserved.test" is a reserved host.
type fakeSiteRuntime struct {
	m               meta.Tenanted
	reloads, purges int
}

func (r *fakeSiteRuntime) Store(tenant string) (meta.Sites, error) {
	return r.m.ForTenant(tenant).(meta.Sites), nil
}

func (r *fakeSiteRuntime) CheckHosts(hosts []string) error {
	for _, h := range hosts {
		if h == "reserved.test" {
			return coffer.Errorf(coffer.ECONFLICT, "host %q is reserved", h)
		}
	}
	return nil
}

func (r *fakeSiteRuntime) Compile(string, *site.Document) error { return nil }
func (r *fakeSiteRuntime) Reload(context.Context)               { r.reloads++ }
func (r *fakeSiteRuntime) Serves(string, string) bool           { return false }
func (r *fakeSiteRuntime) Stats(string, string) service.SiteStats {
	return service.SiteStats{Requests: 3}
}

func (r *fakeSiteRuntime) Purge(context.Context, string, string, site.Purge) (int, bool) {
	r.purges++
	return 1, false
}

const hookSecret = "purge-hook-secret"

// newSite is a fresh site (the admin normalizes and seals what it is given).
func newSite(id string, hosts ...string) *site.Document {
	return &site.Document{ID: id, Hosts: hosts,
		Routes:        []site.Route{{Path: "/*", Target: site.Target{Redirect: &site.Redirect{To: "/x/"}}}},
		PurgeWebhooks: []site.PurgeWebhook{{URL: "https://cdn.example/purge", Secret: hookSecret}}}
}

// TestSiteAdmin: sites are refused with the field named, secrets are sealed, never
// answered and kept by an update that omits them, and every change is reloaded
// and purged as the runtime's contract says.
func TestSiteAdmin(t *testing.T) {
	ctx := context.Background()
	m := openSQLite(t)
	sealer, err := tenant.NewSealer(bytes.Repeat([]byte{9}, tenant.SealKeySize))
	if err != nil {
		t.Fatal(err)
	}
	rt := &fakeSiteRuntime{m: m}
	a := service.SiteAdmin{Tenant: coffer.DefaultTenantID, Sealer: sealer, Runtime: rt}
	for i, c := range []struct {
		s           *site.Document
		code, field string
	}{
		{newSite("www", "bad host"), coffer.EINVALID, "hosts[0]"},
		{newSite("www", "reserved.test"), coffer.ECONFLICT, ""},
		{nil, coffer.EINVALID, "site"},
	} {
		if _, err := a.CreateSite(ctx, c.s); coffer.ErrorCode(err) != c.code || fieldOf(err) != c.field {
			t.Errorf("case %d: CreateSite = %v (field %q), want %s naming %q", i, err, fieldOf(err), c.code, c.field)
		}
	}
	if _, err := (service.SiteAdmin{Runtime: rt}).CreateSite(ctx, newSite("www", "www.test")); coffer.ErrorCode(err) != coffer.EINVALID {
		t.Errorf("a secret without a sealer: %v, want EINVALID", err)
	}
	made, err := a.CreateSite(ctx, newSite("www", "WWW.test"))
	if err != nil {
		t.Fatal(err)
	}
	if h := made.PurgeWebhooks[0]; h.Secret != "" || !h.SecretSet || made.Hosts[0] != "www.test" || made.CreatedAt.IsZero() {
		t.Fatalf("created %+v", made)
	}
	keep := newSite("www", "www.test")
	keep.PurgeWebhooks[0].Secret = ""
	if _, err := a.UpdateSite(ctx, "www", keep); err != nil {
		t.Fatal(err)
	}
	store, _ := rt.Store(coffer.DefaultTenantID)
	row, err := store.GetSite(ctx, "www")
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(row.Doc, []byte(hookSecret)) || !strings.Contains(string(row.Doc), `"secret":"v1:`) {
		t.Fatalf("stored %s: want the secret kept, sealed", row.Doc)
	}
	if _, err := a.UpdateSite(ctx, "www", newSite("other", "www.test")); fieldOf(err) != "id" {
		t.Errorf("an update changing the id: %v", err)
	}
	if rt.reloads != 2 || rt.purges != 1 {
		t.Errorf("%d reloads and %d purges after a create and an update, want 2 and 1", rt.reloads, rt.purges)
	}
	if _, _, err := a.PurgeSite(ctx, "nope", site.Purge{}); coffer.ErrorCode(err) != coffer.ENOTFOUND {
		t.Errorf("purging a missing site: %v", err)
	}
	if st, err := a.SiteStats(ctx, "www"); err != nil || st.Requests != 3 {
		t.Errorf("stats %+v, %v", st, err)
	}
}
