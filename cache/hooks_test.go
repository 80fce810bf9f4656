package cache_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/bus"
)

// Writes through a view report the rows they wrote, with the view's tenant: a
// rename reports the old name too, a delete the deleted row; failed writes nothing.
func TestOnFileWritten(t *testing.T) {
	m := cached(t, openSQLite(t))
	var mu sync.Mutex
	var got []string
	m.OnFileWritten(func(tenant string, files []*coffer.File) {
		mu.Lock()
		defer mu.Unlock()
		for _, f := range files {
			got = append(got, tenant+"|"+f.Name)
		}
	})
	f := upload(t, m, "a.html")
	renamed := "b.html"
	if _, err := m.UpdateFile(t.Context(), f.ID, coffer.FileUpdate{Name: &renamed}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.DeleteFile(t.Context(), f.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := m.DeleteFile(t.Context(), f.ID); coffer.ErrorCode(err) != coffer.ENOTFOUND {
		t.Fatalf("second delete: %v", err)
	}
	want := []string{"|a.html", "|a.html", "|b.html", "|b.html"}
	if len(got) != len(want) {
		t.Fatalf("reported %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("reported %q, want %q", got, want)
		}
	}
}

// SitesChanged and SitePurged go to their functions and flush nothing.
func TestSiteInvalidations(t *testing.T) {
	m := cached(t, openSQLite(t))
	var sites, purges []string
	m.OnSitesChanged(func(tenant string) { sites = append(sites, tenant) })
	m.OnPurge(func(tenant, site string, p bus.Purge) {
		purges = append(purges, tenant+"/"+site+strings.Join(p.Paths, ","))
	})
	f := upload(t, m, "x")
	if _, err := m.GetFile(t.Context(), f.ID); err != nil {
		t.Fatal(err)
	}
	before := m.FileStats()
	m.Handle(bus.Event{Kind: bus.SitesChanged})
	m.Handle(bus.Event{Kind: bus.SitesChanged, Tenant: "acme"})
	m.Handle(bus.Event{Kind: bus.SitePurged, Tenant: "acme", ID: "www", Purge: bus.Purge{Paths: []string{"/a"}}})
	if _, err := m.GetFile(t.Context(), f.ID); err != nil {
		t.Fatal(err)
	}
	if hits := m.FileStats().Hits - before.Hits; hits != 1 {
		t.Fatalf("the row was dropped: %d hits after the site keys", hits)
	}
	if len(sites) != 2 || sites[0] != "" || sites[1] != "acme" || len(purges) != 1 || purges[0] != "acme/www/a" {
		t.Fatalf("sites %q purges %q", sites, purges)
	}
}
