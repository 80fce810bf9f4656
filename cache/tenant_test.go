package cache_test

import (
	"context"
	"testing"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/bus"
	"github.com/coffer/coffer/cache"
	"github.com/coffer/coffer/meta"
)

// TestMetaTenantViewsKeptApart: two tenants' views of one cache, over two stores
// holding a file and a bucket under the same ids, each answer their own rows, from
// the cache once loaded; an invalidation naming one tenant's file (a bus payload)
// drops that tenant's entry only, and the rules of each tenant reload alone.
func TestMetaTenantViewsKeptApart(t *testing.T) {
	ctx := context.Background()
	stores := map[string]*meta.Counting{}
	root := cached(t, meta.NewCounting(openSQLite(t)))
	views := map[string]*cache.Meta{}
	rules := map[string]int{}
	const id = "6f1d6a5e-1c0a-4a51-9d1b-000000000001"
	for _, tenant := range []string{coffer.DefaultTenantID, "acme"} {
		stores[tenant] = meta.NewCounting(openSQLite(t))
		views[tenant] = root.ForTenant(tenant, stores[tenant])
		views[tenant].OnRulesChanged(func() { rules[tenant]++ })
		seedFile(t, stores[tenant], id, "name of "+tenant)
	}
	base := map[string]int64{}
	for tenant, s := range stores {
		base[tenant] = s.Total()
	}
	calls := func(tenant string) int64 { return stores[tenant].Total() - base[tenant] }
	for range 2 {
		for tenant, v := range views {
			f, err := v.GetFile(ctx, id)
			if err != nil || f.Name != "name of "+tenant {
				t.Fatalf("%q: GetFile = %+v, %v", tenant, f, err)
			}
			if b, err := v.GetBucket(ctx, coffer.DefaultBucketID); err != nil || b.ID != coffer.DefaultBucketID {
				t.Fatalf("%q: GetBucket = %+v, %v", tenant, b, err)
			}
		}
	}
	for tenant := range stores {
		if n := calls(tenant); n != 2 { // one GetFile and one GetBucket each: the rest from the cache
			t.Errorf("%q: %d store calls, want 2", tenant, n)
		}
	}
	root.Handle(bus.Event{Kind: bus.FileChanged, Tenant: "acme", ID: id})
	root.Handle(bus.Event{Kind: bus.RulesChanged, Tenant: "acme"})
	for _, v := range views {
		if _, err := v.GetFile(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	if d, a := calls(""), calls("acme"); d != 2 || a != 3 {
		t.Errorf("after invalidating acme's file: default %d, acme %d store calls; want 2 and 3", d, a)
	}
	if rules[""] != 0 || rules["acme"] != 1 {
		t.Errorf("rules reloads %v, want acme's only", rules)
	}
	root.Handle(bus.Event{Kind: bus.FileChanged, ID: id})
	root.Handle(bus.Event{Kind: bus.RulesChanged})
	if _, err := views[""].GetFile(ctx, id); err != nil || calls("") != 3 {
		t.Errorf("the default tenant's file was not invalidated by its FileChanged event: %v, %d calls", err, calls(""))
	}
	if rules[""] != 1 || rules["acme"] != 1 {
		t.Errorf("rules reloads %v after r", rules)
	}
	var changed []string
	root.OnTenantChanged(func(tenant string) { changed = append(changed, tenant) })
	root.Handle(bus.Event{Kind: bus.TenantChanged, Tenant: "acme"})
	if len(changed) != 1 || changed[0] != "acme" || rules[""] != 1 || rules["acme"] != 1 {
		t.Errorf("TenantChanged acme: tenants changed %v, rules reloads %v (a flush would reload them)", changed, rules)
	}
}

// seedFile stores an uploaded file id named name in the default bucket of s.
func seedFile(t *testing.T, s meta.Store, id, name string) {
	t.Helper()
	ctx := context.Background()
	if _, err := s.GetBucket(ctx, coffer.DefaultBucketID); coffer.ErrorCode(err) == coffer.ENOTFOUND {
		if err := s.CreateBucket(ctx, coffer.NewBucket(coffer.DefaultBucketID)); err != nil {
			t.Fatal(err)
		}
	}
	key := "f/00/" + id
	if err := s.BeginUpload(ctx, key, nil); err != nil {
		t.Fatal(err)
	}
	f := &coffer.File{ID: id, BucketID: coffer.DefaultBucketID, Name: name, Size: 1, BlobKey: key, IsUploaded: true, ETag: `"x"`}
	if err := s.CreateFiles(ctx, []*coffer.File{f}); err != nil {
		t.Fatal(err)
	}
}

// TestMetaIncarnationsKeptApart: a tenant id deleted and taken again. The new
// incarnation's view never answers a row the old one cached, even with no
// invalidation at all (a lost bus message), and the old one's view does not get
// the new one's either; DropTenant drops the tenant's entries only and runs the
// OnTenantGone function; bus.TenantGone from the bus does the same.
func TestMetaIncarnationsKeptApart(t *testing.T) {
	ctx := context.Background()
	root := cached(t, meta.NewCounting(openSQLite(t)))
	oldStore, newStore, other := meta.NewCounting(openSQLite(t)), meta.NewCounting(openSQLite(t)), meta.NewCounting(openSQLite(t))
	const id = "6f1d6a5e-1c0a-4a51-9d1b-000000000002"
	seedFile(t, oldStore, id, "the old customer's")
	seedFile(t, other, id, "another tenant's")
	oldView, otherView := root.ForIncarnation("x", "1", oldStore), root.ForIncarnation("y", "1", other)
	for _, v := range []*cache.Meta{oldView, otherView} {
		if _, err := v.GetFile(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := oldView.GetBucket(ctx, coffer.DefaultBucketID); err != nil {
		t.Fatal(err)
	}
	newView := root.ForIncarnation("x", "2", newStore)
	if f, err := newView.GetFile(ctx, id); coffer.ErrorCode(err) != coffer.ENOTFOUND {
		t.Errorf("the new incarnation got the old one's cached file: %+v, %v", f, err)
	}
	seedFile(t, newStore, id, "the new customer's")
	for range 2 {
		if f, err := newView.GetFile(ctx, id); err != nil || f.Name != "the new customer's" {
			t.Errorf("new incarnation: %+v, %v", f, err)
		}
	}
	if f, err := oldView.GetFile(ctx, id); err != nil || f.Name != "the old customer's" {
		t.Errorf("old incarnation: %+v, %v", f, err)
	}
	var gone []string
	root.OnTenantGone(func(tenant string) { gone = append(gone, tenant) })
	before := other.Total()
	root.Handle(bus.Event{Kind: bus.TenantGone, Tenant: "x"})
	if f, err := otherView.GetFile(ctx, id); err != nil || f.Name != "another tenant's" || other.Total() != before {
		t.Errorf("another tenant after TenantGone x: %+v, %v, %d store calls", f, err, other.Total()-before)
	}
	n := oldStore.Total()
	if _, err := oldView.GetFile(ctx, id); err != nil || oldStore.Total() != n+1 {
		t.Errorf("the old incarnation's file was not dropped by TenantGone x (%d store calls)", oldStore.Total()-n)
	}
	root.DropTenant(coffer.DefaultTenantID) // never: the default tenant cannot be deleted
	if len(gone) != 1 || gone[0] != "x" {
		t.Errorf("OnTenantGone ran for %v, want [x]", gone)
	}
}
