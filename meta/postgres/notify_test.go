package postgres_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/bus"
	pgbus "github.com/coffer/coffer/bus/postgres"
	"github.com/coffer/coffer/meta"
	"github.com/coffer/coffer/meta/metatest"
	"github.com/jackc/pgx/v5"
)

// TestNotifyPayloads: the invalidation payloads are byte for byte the old ones for
// the default tenant and carry the tenant for others (0009_tenants.sql); each is a
// cluster bus event (bus.Decode reads it).
func TestNotifyPayloads(t *testing.T) {
	u := freshSchema(t, databaseURL(t))
	s := open(t, u)
	metatest.Migrated(t, s)
	l, err := pgx.Connect(t.Context(), u)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close(context.Background())
	if _, err := l.Exec(t.Context(), "LISTEN "+pgbus.Channel); err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(s.CreateTenant(ctx, &coffer.Tenant{ID: "t1", Hosts: []string{"t1.example"}}))
	v := s.ForTenant("t1")
	want := []string{"t:t1", "b:t1/default"}
	for _, c := range []struct {
		store meta.Store
		rules string
	}{{s, "r"}, {v, "r:t1"}} {
		must(c.store.PutRules(ctx, []byte(`{}`)))
		want = append(want, c.rules)
	}
	for _, c := range []struct {
		st     meta.Store
		prefix string
	}{{s, ""}, {v, "t1/"}} {
		must(c.st.CreateBucket(ctx, coffer.NewBucket("x")))
		f := &coffer.File{ID: coffer.NewFileID(), BucketID: "x", Name: "n", Metadata: []byte(`{}`), BlobKey: "k"}
		must(c.st.BeginUpload(ctx, "k", nil))
		must(c.st.CreateFiles(ctx, []*coffer.File{f}))
		_, err := c.st.DeleteFile(ctx, f.ID)
		must(err)
		want = append(want, "b:"+c.prefix+"x", "f:"+c.prefix+f.ID)
	}
	state := coffer.TenantSuspended
	_, err = s.UpdateTenant(ctx, "t1", coffer.TenantUpdate{State: &state})
	must(err)
	var got []string
	for len(got) < len(want) {
		wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		n, err := l.WaitForNotification(wctx)
		cancel()
		if err != nil {
			t.Fatalf("after %v: %v", got, err)
		}
		if _, err := bus.Decode(n.Payload); err != nil {
			t.Errorf("the trigger sent %q, not a cluster bus event: %v", n.Payload, err)
		}
		if !slices.Contains(got, n.Payload) {
			got = append(got, n.Payload)
		}
	}
	slices.Sort(got)
	slices.Sort(want)
	want = slices.Compact(want)
	if !slices.Equal(got, want) {
		t.Errorf("payloads %q\nwant     %q", got, want)
	}
}
