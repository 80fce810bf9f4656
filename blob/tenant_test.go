package blob_test

import (
	"bytes"
	"context"
	"io"
	"sort"
	"testing"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/blob"
	"github.com/coffer/coffer/blob/blobtest"
	"github.com/coffer/coffer/blob/fsblob"
	"github.com/coffer/coffer/blob/memblob"
)

// TestTenantViewConformance: a tenant's view of a shared store is a driver like any
// other (the one suite), on memory and on disk, and so is the default tenant's.
func TestTenantViewConformance(t *testing.T) {
	for _, tenant := range []string{"acme", coffer.DefaultTenantID} {
		t.Run("mem/"+tenant, func(t *testing.T) {
			blobtest.Run(t, func(*testing.T) blob.Driver { return blob.New(memblob.New()).ForTenant(tenant) })
		})
		t.Run("fs/"+tenant, func(t *testing.T) {
			blobtest.Run(t, func(t *testing.T) blob.Driver {
				d, err := fsblob.New(t.TempDir())
				if err != nil {
					t.Fatal(err)
				}
				return blob.New(d).ForTenant(tenant)
			})
		})
	}
}

// TestTenantViewsIsolated: three tenants (the default one included) writing the same
// key each read, list and delete their own blob only; the default tenant's List
// never shows another tenant's keys; the bytes sit under "t/<id>/" in the driver.
func TestTenantViewsIsolated(t *testing.T) {
	ctx := context.Background()
	raw := memblob.New()
	shared := blob.New(raw)
	views := map[string]*blob.Store{}
	for _, id := range []string{coffer.DefaultTenantID, "acme", "acme-2"} {
		views[id] = shared.ForTenant(id)
		body := []byte("bytes of " + id)
		a, err := views[id].Put(ctx, "f/ab/k", bytes.NewReader(body), int64(len(body)))
		if err != nil || a.Key != "f/ab/k" {
			t.Fatalf("%q: Put = %+v, %v", id, a, err)
		}
	}
	for id, v := range views {
		r, err := v.Open(ctx, "f/ab/k")
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(r)
		r.Close()
		if string(got) != "bytes of "+id || r.Attrs().Key != "f/ab/k" {
			t.Errorf("%q reads %q as %q", id, got, r.Attrs().Key)
		}
		if keys := list(t, v, ""); len(keys) != 1 || keys[0] != "f/ab/k" {
			t.Errorf("%q lists %v", id, keys)
		}
	}
	if keys := list(t, shared, ""); len(keys) != 3 || keys[0] != "f/ab/k" || keys[1] != "t/acme-2/f/ab/k" || keys[2] != "t/acme/f/ab/k" {
		t.Errorf("the driver holds %v", keys)
	}
	if err := views["acme"].Delete(ctx, "f/ab/k"); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{coffer.DefaultTenantID, "acme-2"} {
		if _, err := views[id].Stat(ctx, "f/ab/k"); err != nil {
			t.Errorf("%q lost its blob to acme's delete: %v", id, err)
		}
	}
	if _, err := views["acme"].Stat(ctx, "f/ab/k"); coffer.ErrorCode(err) != coffer.ENOTFOUND {
		t.Errorf("acme's blob after its delete: %v", err)
	}
}

func list(t *testing.T, s *blob.Store, prefix string) []string {
	t.Helper()
	var keys []string
	if err := s.List(context.Background(), prefix, func(a blob.Attrs) error { keys = append(keys, a.Key); return nil }); err != nil {
		t.Fatal(err)
	}
	sort.Strings(keys)
	return keys
}
