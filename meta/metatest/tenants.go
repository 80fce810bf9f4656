package metatest

import (
	"testing"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/meta"
)

// Shared is a store shared by tenants, with their registry (both SQL stores).
type Shared interface {
	meta.Store
	meta.Tenanted
	meta.Tenants
}

// tenantTests run against a fresh, migrated Shared store.
var tenantTests = []test2{
	{"Isolation", testIsolation},
	{"IsolationLists", testIsolationLists},
	{"Registry", testRegistry},
	{"RegistryHosts", testRegistryHosts},
	{"PurgeResumable", testPurgeResumable},
	{"PurgeInterrupted", testPurgeInterrupted},
	{"QuotaConcurrent", testQuotaConcurrent},
	{"QuotaFiles", testQuotaFiles},
	{"QuotaRefusalChangesNothing", testQuotaRefusalChangesNothing},
	{"UsageExact", testUsageExact},
}

type test2 struct {
	name string
	fn   func(t *testing.T, s Shared)
}

// RunTenants runs the tenancy suite: the whole conformance suite (Run) again on
// tenant t1's view, next to a default tenant that holds rows of its own, then the
// isolation, registry, purge, quota and usage tests. newStore is as for Run.
func RunTenants(t *testing.T, newStore func(t *testing.T) Shared) {
	t.Run("Conformance", func(t *testing.T) {
		Run(t, func(t *testing.T) meta.Store {
			s := newStore(t)
			noise(t, s)
			mustTenant(t, s, "t1")
			return s.ForTenant("t1")
		})
	})
	for _, tt := range tenantTests {
		t.Run(tt.name, func(t *testing.T) { tt.fn(t, newStore(t)) })
	}
}

// noise gives s's tenant rows that no other tenant may see: a bucket, uploaded and
// not-yet-uploaded files in the default bucket, an intent, rules and a rejection (no
// subscription: claiming deliveries works across tenants).
func noise(t *testing.T, s meta.Store) {
	t.Helper()
	mustBucket(t, s, "noise")
	createNames(t, s, coffer.DefaultBucketID, "a", "b", "noise/c")
	createNames(t, s, "noise", "a")
	_, _, _, err := putNamed(t, s, coffer.DefaultBucketID, "a", meta.Precondition{})
	must(t, err)
	must(t, s.BeginUpload(t.Context(), newKey(), newFile(coffer.DefaultBucketID, "pending")))
	must(t, s.BeginUpload(t.Context(), newKey(), nil))
	must(t, s.PutRules(t.Context(), []byte(`{"noise":true}`)))
	if r, ok := s.(meta.Rejections); ok {
		must(t, r.RecordRejection(t.Context(), &coffer.Rejection{ID: coffer.NewFileID(),
			BucketID: coffer.DefaultBucketID, Name: "x.exe", Role: "user", Signature: "Eicar", Size: 68}))
	}
}

// mustTenant registers tenant id with host id+".example" and no quota.
func mustTenant(t *testing.T, s meta.Tenants, id string) *coffer.Tenant {
	t.Helper()
	tn := &coffer.Tenant{ID: id, Hosts: []string{id + ".example"}, Settings: []byte(`{}`)}
	must(t, s.CreateTenant(t.Context(), tn))
	return tn
}

// mustDeleting sets tenant id's state to deleting, as deleting it does before
// PurgeTenant.
func mustDeleting(t *testing.T, s meta.Tenants, id string) {
	t.Helper()
	state := coffer.TenantDeleting
	_, err := s.UpdateTenant(t.Context(), id, coffer.TenantUpdate{State: &state})
	must(t, err)
}

// scoped is a tenant's view with every optional interface the SQL stores offer.
type scoped interface {
	meta.Store
	meta.Outbox
	meta.Rejections
	meta.Usage
}

// view returns tenant id's view of s, failing t unless it offers scoped.
func view(t *testing.T, s Shared, id string) scoped {
	t.Helper()
	v, ok := s.ForTenant(id).(scoped)
	if !ok {
		t.Fatalf("ForTenant(%q) is %T: not a meta.Outbox, meta.Rejections and meta.Usage", id, s.ForTenant(id))
	}
	if _, ok := v.(meta.Tenants); ok {
		t.Errorf("ForTenant(%q) offers the registry (meta.Tenants): a tenant's view must not", id)
	}
	must(t, v.Ping(t.Context()))
	must(t, v.Close())
	return v
}

// checkUsage compares s's Usage with the sum of its uploaded files.
func checkUsage(t *testing.T, s scoped) coffer.Usage {
	t.Helper()
	var want coffer.Usage
	must(t, s.EachFile(t.Context(), func(f *coffer.File) error {
		if f.IsUploaded {
			want.Bytes += f.Size
			want.Files++
		}
		return nil
	}))
	got, err := s.Usage(t.Context())
	must(t, err)
	if got != want {
		t.Fatalf("Usage = %+v, want %+v (the sum of the uploaded files)", got, want)
	}
	return got
}
