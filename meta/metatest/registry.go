package metatest

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coffer/coffer"
)

// testRegistry: create, get, list and update tenants; a new tenant starts with the
// default bucket only; ids are unique and the default tenant's is refused.
func testRegistry(t *testing.T, s Shared) {
	ctx := t.Context()
	wantCode(t, s.CreateTenant(ctx, &coffer.Tenant{ID: coffer.DefaultTenantID}), coffer.EINVALID)
	tn := &coffer.Tenant{ID: "acme", Hosts: []string{"b.example", "a.example", "a.example"},
		Settings: []byte(`{"k":1}`), Quota: coffer.Quota{MaxBytes: 10, MaxFiles: 2}}
	must(t, s.CreateTenant(ctx, tn))
	if tn.State != coffer.TenantActive || !slices.Equal(tn.Hosts, []string{"a.example", "b.example"}) {
		t.Fatalf("created %+v, want state active and hosts sorted without repeats", tn)
	}
	checkTime(t, "CreatedAt", tn.CreatedAt)
	wantCode(t, s.CreateTenant(ctx, &coffer.Tenant{ID: "acme"}), coffer.ECONFLICT)
	got, err := s.GetTenant(ctx, "acme")
	must(t, err)
	checkTenant(t, got, tn)
	_, err = s.GetTenant(ctx, "nope")
	wantCode(t, err, coffer.ENOTFOUND)
	buckets, err := s.ForTenant("acme").ListBuckets(ctx)
	must(t, err)
	if len(buckets) != 1 || buckets[0].ID != coffer.DefaultBucketID {
		t.Errorf("a new tenant's buckets: %d, want the default bucket only", len(buckets))
	}
	state, settings := coffer.TenantSuspended, []byte(`{"k":2}`)
	quota := coffer.Quota{MaxBytes: 100}
	up, err := s.UpdateTenant(ctx, "acme", coffer.TenantUpdate{State: &state, Settings: &settings, Quota: &quota})
	must(t, err)
	if up.State != state || string(up.Settings) != `{"k":2}` || up.Quota != quota ||
		!slices.Equal(up.Hosts, tn.Hosts) || !up.UpdatedAt.After(tn.UpdatedAt) && !up.UpdatedAt.Equal(tn.UpdatedAt) {
		t.Errorf("updated %+v", up)
	}
	got, err = s.GetTenant(ctx, "acme")
	must(t, err)
	checkTenant(t, got, up)
	_, err = s.UpdateTenant(ctx, "nope", coffer.TenantUpdate{State: &state})
	wantCode(t, err, coffer.ENOTFOUND)
	mustTenant(t, s, "beta")
	list, err := s.ListTenants(ctx)
	must(t, err)
	if len(list) != 2 || list[0].ID != "acme" || list[1].ID != "beta" {
		t.Fatalf("ListTenants = %d tenants, want acme and beta", len(list))
	}
	checkTenant(t, list[0], up)
	if !slices.Equal(list[1].Hosts, []string{"beta.example"}) {
		t.Errorf("beta's hosts %v", list[1].Hosts)
	}
}

// checkTenant compares every field of got with want.
func checkTenant(t *testing.T, got, want *coffer.Tenant) {
	t.Helper()
	checkRow(t, "tenant "+want.ID, got, want, func(tn *coffer.Tenant) []*time.Time {
		return []*time.Time{&tn.CreatedAt, &tn.UpdatedAt}
	})
}

// checkRow compares every field of got with want, the times that times points at
// with Equal (a time read back may differ in its location's representation).
func checkRow[T any](t *testing.T, what string, got, want *T, times func(*T) []*time.Time) {
	t.Helper()
	g, w := *got, *want
	gt, wt := times(&g), times(&w)
	for i := range gt {
		if !gt[i].Equal(*wt[i]) {
			t.Errorf("%s: time %d = %v, want %v", what, i, *gt[i], *wt[i])
		}
		*gt[i] = *wt[i]
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("%s = %+v\nwant %+v", what, g, w)
	}
}

// testRegistryHosts: a host belongs to one tenant at most, on create and on update
// (ECONFLICT naming it, nothing changed); a host a tenant gave up may be taken.
func testRegistryHosts(t *testing.T, s Shared) {
	ctx := t.Context()
	mustTenant(t, s, "a")
	err := s.CreateTenant(ctx, &coffer.Tenant{ID: "b", Hosts: []string{"b.example", "a.example"}})
	wantCode(t, err, coffer.ECONFLICT)
	if !strings.Contains(err.Error(), `"a.example"`) {
		t.Errorf("conflict %q does not name the host", err)
	}
	_, err = s.GetTenant(ctx, "b")
	wantCode(t, err, coffer.ENOTFOUND)
	b := mustTenant(t, s, "b")
	hosts := []string{"b.example", "a.example"}
	_, err = s.UpdateTenant(ctx, "b", coffer.TenantUpdate{Hosts: &hosts})
	wantCode(t, err, coffer.ECONFLICT)
	got, err := s.GetTenant(ctx, "b")
	must(t, err)
	checkTenant(t, got, b)
	none := []string{}
	_, err = s.UpdateTenant(ctx, "a", coffer.TenantUpdate{Hosts: &none})
	must(t, err)
	up, err := s.UpdateTenant(ctx, "b", coffer.TenantUpdate{Hosts: &hosts})
	must(t, err)
	if !slices.Equal(up.Hosts, []string{"a.example", "b.example"}) {
		t.Errorf("hosts after taking a.example: %v", up.Hosts)
	}
}

// purgeFixture gives tenant id (registered here) and tenant "keep" the same rows, and
// returns the blob keys of id's files and intents.
func purgeFixture(t *testing.T, s Shared, id string) (keys []string, keep scoped, keepTwin *twin) {
	t.Helper()
	mustTenant(t, s, id)
	mustTenant(t, s, "keep")
	v := view(t, s, id)
	tw := populate(t, v, true)
	for range 2 {
		must(t, v.RecordRejection(t.Context(), &coffer.Rejection{ID: coffer.NewFileID(), BucketID: "only",
			Name: "y", Role: "user", Signature: "Eicar", Size: 1}))
	}
	must(t, v.EachFile(t.Context(), func(f *coffer.File) error { keys = append(keys, f.BlobKey); return nil }))
	keys = append(keys, tw.intent) // the pending file's intent shares its key
	keep = view(t, s, "keep")
	return keys, keep, populate(t, keep, true)
}

// testPurgeResumable purges a tenant one row at a time: every blob key comes back
// once, usage stays exact, the other tenant keeps everything, and the tenant is gone
// at the end.
func testPurgeResumable(t *testing.T, s Shared) {
	ctx := t.Context()
	keys, keep, keepTwin := purgeFixture(t, s, "gone")
	before := snapshot(t, keep, keepTwin)
	_, _, err := s.PurgeTenant(ctx, coffer.DefaultTenantID, 1)
	wantCode(t, err, coffer.EINVALID)
	_, _, err = s.PurgeTenant(ctx, "nope", 1)
	wantCode(t, err, coffer.ENOTFOUND)
	gone := view(t, s, "gone")
	st0 := snapshot(t, gone, &twin{sub: &coffer.Subscription{}})
	_, _, err = s.PurgeTenant(ctx, "gone", 1) // active: perhaps a new tenant of a purged one's id
	wantCode(t, err, coffer.EPRECONDITION)
	if st := snapshot(t, gone, &twin{sub: &coffer.Subscription{}}); !reflect.DeepEqual(st, st0) {
		t.Fatalf("PurgeTenant of an active tenant changed it:\nbefore %+v\nafter  %+v", st0, st)
	}
	mustDeleting(t, s, "gone")
	var got []string
	for i := 0; ; i++ {
		if i > 100 {
			t.Fatal("PurgeTenant never reported done")
		}
		ks, done, err := s.PurgeTenant(ctx, "gone", 1)
		must(t, err)
		got = append(got, ks...)
		checkUsage(t, view(t, s, "gone"))
		if done {
			break
		}
	}
	checkPurged(t, s, "gone", got, keys)
	if after := snapshot(t, keep, keepTwin); !reflect.DeepEqual(after, before) {
		t.Errorf("purging changed another tenant:\nbefore %+v\nafter  %+v", before, after)
	}
}

// checkPurged checks that tenant id is gone with every row and that got holds exactly
// the blob keys of want.
func checkPurged(t *testing.T, s Shared, id string, got, want []string) {
	t.Helper()
	slices.Sort(got)
	slices.Sort(want)
	want = slices.Compact(want)
	if !slices.Equal(got, want) {
		t.Errorf("purge returned blob keys %v\nwant %v", got, want)
	}
	_, err := s.GetTenant(t.Context(), id)
	wantCode(t, err, coffer.ENOTFOUND)
	v := view(t, s, id)
	st := snapshot(t, v, &twin{sub: &coffer.Subscription{}})
	if len(st.Buckets)+len(st.Files)+len(st.Intents)+len(st.Subs)+len(st.Rejections)+len(st.Rules) > 0 ||
		st.Usage != (coffer.Usage{}) {
		t.Errorf("purged tenant still shows %+v", st)
	}
	_, _, err = s.PurgeTenant(t.Context(), id, 1)
	wantCode(t, err, coffer.ENOTFOUND)
}

// testPurgeInterrupted: a purge call that fails (its context ends) changes nothing; one
// whose keys are lost (a crash) leaves orphans only; a later purge finishes the job.
func testPurgeInterrupted(t *testing.T, s Shared) {
	keys, keep, keepTwin := purgeFixture(t, s, "gone")
	mustDeleting(t, s, "gone")
	before := snapshot(t, keep, keepTwin)
	v := view(t, s, "gone")
	st0 := snapshot(t, v, &twin{sub: &coffer.Subscription{}})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, _, err := s.PurgeTenant(ctx, "gone", 2); err == nil {
		t.Fatal("PurgeTenant with an ended context succeeded")
	}
	if st := snapshot(t, v, &twin{sub: &coffer.Subscription{}}); !reflect.DeepEqual(st, st0) {
		t.Fatalf("a failed purge changed the tenant:\nbefore %+v\nafter  %+v", st0, st)
	}
	lost, done, err := s.PurgeTenant(t.Context(), "gone", 3) // the crash: these keys are never deleted
	must(t, err)
	if done || len(lost) == 0 {
		t.Fatalf("first batch: %d keys, done %v", len(lost), done)
	}
	var got []string
	for done := false; !done; {
		var ks []string
		ks, done, err = s.PurgeTenant(t.Context(), "gone", 1000)
		must(t, err)
		got = append(got, ks...)
	}
	checkPurged(t, s, "gone", append(got, lost...), keys)
	if after := snapshot(t, keep, keepTwin); !reflect.DeepEqual(after, before) {
		t.Errorf("purging changed another tenant")
	}
}
