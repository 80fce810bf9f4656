package metatest

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/meta"
)

// twin is what populate gave one tenant: the same names as its twin's, other ids.
type twin struct {
	files      []*coffer.File // uploaded, in bucket "shared"
	named      *coffer.File   // the named file "shared"/"named"
	pending    *coffer.File   // not uploaded yet, with its intent
	intent     string         // an intent without a file
	sub        *coffer.Subscription
	deliveries []*coffer.Delivery
	rejection  string
}

// populate gives tenant v the rows of the isolation tests: buckets "shared" (and
// "only" when only is set), files "n" and "m", the named file "named", a pending upload,
// a bare intent, rules, a subscription with its deliveries and a rejection.
func populate(t *testing.T, v scoped, only bool) *twin {
	t.Helper()
	tw := &twin{}
	mustBucket(t, v, "shared")
	if only {
		mustBucket(t, v, "only")
		createNames(t, v, "only", "n")
	}
	tw.sub = subscribe(t, v, "")
	tw.files = createNames(t, v, "shared", "n", "m")
	var err error
	tw.named, _, _, err = putNamed(t, v, "shared", "named", meta.Precondition{})
	must(t, err)
	tw.pending = newFile("shared", "pending")
	must(t, v.BeginUpload(t.Context(), tw.pending.BlobKey, tw.pending))
	tw.intent = newKey()
	must(t, v.BeginUpload(t.Context(), tw.intent, nil))
	must(t, v.PutRules(t.Context(), []byte(fmt.Sprintf(`{"tenant":%q}`, tw.sub.ID))))
	tw.deliveries, err = v.ListDeliveries(t.Context(), meta.DeliveryQuery{SubscriptionID: tw.sub.ID})
	must(t, err)
	tw.rejection = coffer.NewFileID()
	must(t, v.RecordRejection(t.Context(), &coffer.Rejection{ID: tw.rejection, BucketID: "shared",
		Name: "x.exe", Role: "user", Signature: "Eicar", Size: 68}))
	return tw
}

// state is everything a tenant's view shows, for comparing before and after.
type state struct {
	Buckets, Files, Named, Intents, NotUploaded, Subs, Deliveries, Rejections, Rules []string
	Usage                                                                            coffer.Usage
}

// snapshot reads v's whole state (files listed per bucket and through EachFile).
func snapshot(t *testing.T, v scoped, tw *twin) state {
	t.Helper()
	ctx := t.Context()
	var st state
	buckets, err := v.ListBuckets(ctx)
	must(t, err)
	for _, b := range buckets {
		st.Buckets = append(st.Buckets, fmt.Sprintf("%s %v", b.ID, b.UpdatedAt))
		page, err := v.ListFiles(ctx, coffer.ListOptions{BucketID: b.ID, Limit: 1000})
		must(t, err)
		for _, f := range page.Files {
			st.Files = append(st.Files, fmt.Sprintf("list %s %s %s %d %v", f.BucketID, f.Name, f.ID, f.Size, f.UpdatedAt))
		}
	}
	must(t, v.EachFile(ctx, func(f *coffer.File) error {
		st.Files = append(st.Files, fmt.Sprintf("each %s %s %s %v %v", f.BucketID, f.Name, f.ID, f.IsUploaded, f.UpdatedAt))
		return nil
	}))
	if f, err := v.GetFileByName(ctx, "shared", "named"); err == nil {
		st.Named = append(st.Named, f.ID+" "+f.BlobKey)
	}
	for k := range intentKeys(t, v) {
		st.Intents = append(st.Intents, k)
	}
	slices.Sort(st.Intents)
	pending, err := v.ListNotUploaded(ctx, 1000)
	must(t, err)
	st.NotUploaded = ids(pending)
	subs, err := v.ListSubscriptions(ctx)
	must(t, err)
	for _, s := range subs {
		st.Subs = append(st.Subs, s.ID)
	}
	ds, err := v.ListDeliveries(ctx, meta.DeliveryQuery{SubscriptionID: tw.sub.ID, Limit: 1000})
	must(t, err)
	for _, d := range ds {
		st.Deliveries = append(st.Deliveries, fmt.Sprintf("%d %s %d %v", d.ID, d.State, d.Attempts, d.UpdatedAt))
	}
	rs, err := v.ListRejections(ctx, 1000)
	must(t, err)
	for _, r := range rs {
		st.Rejections = append(st.Rejections, r.ID)
	}
	if doc, err := v.GetRules(ctx); err == nil {
		st.Rules = []string{string(doc)}
	}
	st.Usage, err = v.Usage(ctx)
	must(t, err)
	return st
}

// describe renders an outcome with the ids in ids replaced, so that the outcome of
// a call naming another tenant's id compares with that of one naming a missing id.
func describeOutcome(result any, err error, ids ...string) string {
	s := fmt.Sprintf("%v | %s | %v", result, coffer.ErrorCode(err), err)
	for _, id := range ids {
		if id != "" {
			s = strings.ReplaceAll(s, id, "ID")
		}
	}
	return s
}

// testIsolation calls every scoped method of tenant a with tenant b's ids (and a's
// missing ids, for comparison): each answers exactly as for a missing id, and b's
// state does not change.
func testIsolation(t *testing.T, s Shared) {
	mustTenant(t, s, "ta")
	mustTenant(t, s, "tb")
	a, b := view(t, s, "ta"), view(t, s, "tb")
	populate(t, a, false)
	tb := populate(t, b, true)
	before := snapshot(t, b, tb)
	missing := &twin{files: []*coffer.File{newFile("shared", "n")}, pending: newFile("shared", "pending"),
		intent: newKey(), sub: &coffer.Subscription{ID: coffer.NewFileID()}, named: newFile("x", "named")}
	for _, op := range isolationOps(t, a) {
		got, want := op.call(tb, "only"), op.call(missing, "gone")
		if got != want {
			t.Errorf("%s on the other tenant's ids: %s\n  on missing ids: %s", op.name, got, want)
		}
	}
	if after := snapshot(t, b, tb); !reflect.DeepEqual(after, before) {
		t.Errorf("tenant tb changed by ta's calls:\nbefore %+v\nafter  %+v", before, after)
	}
}

// isolationOp is one call of a tenant's view with the ids of a twin (and a bucket id).
type isolationOp struct {
	name string
	call func(tw *twin, bucket string) string
}

// isolationOps lists every scoped method of v that takes an id.
func isolationOps(t *testing.T, v scoped) []isolationOp {
	ctx := t.Context()
	up := true
	name := "renamed"
	fid := func(tw *twin) string { return tw.files[0].ID }
	return []isolationOp{
		{"GetFile", func(tw *twin, _ string) string {
			f, err := v.GetFile(ctx, fid(tw))
			return describeOutcome(f != nil, err, fid(tw))
		}},
		{"UpdateFile", func(tw *twin, _ string) string {
			f, err := v.UpdateFile(ctx, fid(tw), coffer.FileUpdate{Name: &name})
			return describeOutcome(f != nil, err, fid(tw))
		}},
		{"DeleteFile", func(tw *twin, _ string) string {
			f, err := v.DeleteFile(ctx, fid(tw))
			return describeOutcome(f != nil, err, fid(tw))
		}},
		{"CommitUpload", func(tw *twin, _ string) string {
			_, f, err := v.CommitUpload(ctx, tw.pending.ID, tw.pending.BlobKey, coffer.FileUpdate{IsUploaded: &up})
			return describeOutcome(f != nil, err, tw.pending.ID, tw.pending.BlobKey)
		}},
		{"CreateFiles(intent)", func(tw *twin, _ string) string {
			f := newFile("shared", "c")
			f.BlobKey = tw.intent
			return describeOutcome(nil, v.CreateFiles(ctx, []*coffer.File{f}), tw.intent)
		}},
		{"BlobReferenced", func(tw *twin, _ string) string {
			ok, err := v.BlobReferenced(ctx, tw.files[0].BlobKey)
			return describeOutcome(ok, err, tw.files[0].BlobKey)
		}},
		{"BlobReferenced(intent)", func(tw *twin, _ string) string {
			ok, err := v.BlobReferenced(ctx, tw.intent)
			return describeOutcome(ok, err, tw.intent)
		}},
		{"AbortUpload", func(tw *twin, _ string) string {
			return describeOutcome(nil, v.AbortUpload(ctx, tw.pending.BlobKey), tw.pending.BlobKey)
		}},
		{"GetBucket", func(_ *twin, b string) string {
			x, err := v.GetBucket(ctx, b)
			return describeOutcome(x != nil, err, b)
		}},
		{"UpdateBucket", func(_ *twin, b string) string {
			x, err := v.UpdateBucket(ctx, b, coffer.BucketUpdate{})
			return describeOutcome(x != nil, err, b)
		}},
		{"DeleteBucket", func(_ *twin, b string) string { return describeOutcome(nil, v.DeleteBucket(ctx, b), b) }},
		{"ListFiles", func(_ *twin, b string) string {
			p, err := v.ListFiles(ctx, coffer.ListOptions{BucketID: b})
			return describeOutcome(len(p.Files), err, b)
		}},
		{"BeginUpload(file)", func(_ *twin, b string) string {
			err := v.BeginUpload(ctx, newKey(), newFile(b, "n"))
			return describeOutcome(nil, err, b)
		}},
		{"CreateFiles(bucket)", func(_ *twin, b string) string {
			f := newFile(b, "n")
			must(t, v.BeginUpload(ctx, f.BlobKey, nil))
			defer func() { must(t, v.AbortUpload(ctx, f.BlobKey)) }()
			return describeOutcome(nil, v.CreateFiles(ctx, []*coffer.File{f}), b)
		}},
		{"PutFileByName(bucket)", func(_ *twin, b string) string {
			f := newFile(b, "n")
			must(t, v.BeginUpload(ctx, f.BlobKey, nil))
			defer func() { must(t, v.AbortUpload(ctx, f.BlobKey)) }()
			_, after, err := v.PutFileByName(ctx, f, meta.Precondition{})
			return describeOutcome(after != nil, err, b)
		}},
		{"GetFileByName", func(_ *twin, b string) string {
			f, err := v.GetFileByName(ctx, b, "n")
			return describeOutcome(f != nil, err, b)
		}},
		{"GetSubscription", func(tw *twin, _ string) string {
			x, err := v.GetSubscription(ctx, tw.sub.ID)
			return describeOutcome(x != nil, err, tw.sub.ID)
		}},
		{"ListDeliveries", func(tw *twin, _ string) string {
			ds, err := v.ListDeliveries(ctx, meta.DeliveryQuery{SubscriptionID: tw.sub.ID})
			return describeOutcome(len(ds), err, tw.sub.ID)
		}},
		{"Redeliver", func(tw *twin, _ string) string {
			id := int64(1 << 40)
			if len(tw.deliveries) > 0 {
				id = tw.deliveries[0].ID
			}
			return describeOutcome(nil, v.Redeliver(ctx, tw.sub.ID, id, time.Now()), tw.sub.ID, fmt.Sprint(id))
		}},
		{"DeleteSubscription", func(tw *twin, _ string) string {
			return describeOutcome(nil, v.DeleteSubscription(ctx, tw.sub.ID), tw.sub.ID)
		}},
	}
}

// testIsolationLists: every listing of a tenant's view shows its own rows only, for
// two tenants with the same bucket ids and names and for the default tenant.
func testIsolationLists(t *testing.T, s Shared) {
	mustTenant(t, s, "ta")
	mustTenant(t, s, "tb")
	a, b := view(t, s, "ta"), view(t, s, "tb")
	ta, tb := populate(t, a, false), populate(t, b, true)
	def := s.(scoped)
	for _, c := range []struct {
		v      scoped
		tw     *twin
		only   bool
		bucket string
	}{{a, ta, false, "ta"}, {b, tb, true, "tb"}} {
		st := snapshot(t, c.v, c.tw)
		want := wantState(c.tw, c.only)
		if !reflect.DeepEqual(names(st), want) {
			t.Errorf("tenant %s shows %+v\nwant %+v", c.bucket, names(st), want)
		}
		checkUsage(t, c.v)
	}
	checkClaims(t, a, map[string]*twin{"ta": ta, "tb": tb})
	dst := snapshot(t, def, ta)
	if len(dst.Buckets) != 1 || len(dst.Files) != 0 || len(dst.Intents) != 0 || len(dst.Subs) != 0 ||
		len(dst.Rejections) != 0 || len(dst.Rules) != 0 || dst.Usage != (coffer.Usage{}) {
		t.Errorf("the default tenant shows other tenants' rows: %+v", dst)
	}
}

// names keeps of a state what identifies rows (ids), not their times.
func names(st state) []string {
	out := []string{fmt.Sprint(len(st.Buckets)), fmt.Sprint(len(st.Files))}
	out = append(out, st.Named...)
	out = append(out, st.Intents...)
	out = append(out, st.NotUploaded...)
	out = append(out, st.Subs...)
	out = append(out, fmt.Sprint(len(st.Deliveries)))
	out = append(out, st.Rejections...)
	return append(out, st.Rules...)
}

// wantState is names of what populate gave a tenant.
func wantState(tw *twin, only bool) []string {
	buckets, files := 2, 3+4 // listed: n, m, named; each: those and pending
	if only {
		buckets, files = 3, files+2 // "only"/"n", listed and each
	}
	intents := []string{tw.pending.BlobKey, tw.intent}
	slices.Sort(intents)
	out := []string{fmt.Sprint(buckets), fmt.Sprint(files), tw.named.ID + " " + tw.named.BlobKey}
	out = append(out, intents...)
	out = append(out, tw.pending.ID, tw.sub.ID, fmt.Sprint(len(tw.deliveries)+1), tw.rejection) // +1: file.rejected
	return append(out, fmt.Sprintf(`{"tenant":%q}`, tw.sub.ID))
}

// checkClaims claims every due delivery through one tenant's view (claims work across
// tenants: one dispatcher per node) and checks that each goes to its own tenant's
// subscription with its own tenant's event.
func checkClaims(t *testing.T, v scoped, twins map[string]*twin) {
	t.Helper()
	files := map[string]string{} // file id → the subscription of its tenant
	want := 0
	for _, tw := range twins {
		for _, f := range append(slices.Clone(tw.files), tw.named) {
			files[f.ID] = tw.sub.ID
		}
		want += len(tw.deliveries) + 1 // and file.rejected
	}
	cs := claimAll(t, v)
	if len(cs) != want {
		t.Fatalf("claimed %d deliveries, want %d (every tenant's)", len(cs), want)
	}
	for _, c := range cs {
		ev := decodeEvent(t, c)
		if ev.File == nil {
			continue // the rejection
		}
		if sub := files[ev.File.ID]; sub != c.Delivery.SubscriptionID || c.Secret == "" {
			t.Errorf("event of file %s went to subscription %s, want %s", ev.File.ID, c.Delivery.SubscriptionID, sub)
		}
	}
}
