package metatest

import (
	"context"
	"reflect"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/meta"
	"github.com/coffer/coffer/webhook/payload"
)

type outboxStore interface {
	meta.Store
	meta.Outbox
}

// outboxTests run against stores that implement meta.Outbox; others skip them.
var outboxTests = []test{
	{"OutboxEventPerChange", testEventPerChange},
	{"OutboxNoSubscriptionNoEvent", testNoSubscriptionNoEvent},
	{"OutboxFilters", testOutboxFilters},
	{"OutboxFailedChangeNoEvent", testFailedChangeNoEvent},
	{"OutboxLease", testOutboxLease},
	{"OutboxOutcomes", testOutboxOutcomes},
	{"OutboxConcurrentClaims", testConcurrentClaims},
	{"OutboxSubscriptions", testSubscriptions},
	{"OutboxPrune", testOutboxPrune},
	{"OutboxRedeliverInFlight", testRedeliverInFlight},
	{"OutboxSubscriptionDeletedDuringChange", testSubscriptionDeletedDuringChange},
}

func asOutbox(t *testing.T, s meta.Store) outboxStore {
	t.Helper()
	o, ok := s.(outboxStore)
	if !ok {
		t.Skip("store does not implement meta.Outbox")
	}
	return o
}

func subscribe(t *testing.T, o meta.Outbox, bucket string, types ...coffer.EventType) *coffer.Subscription {
	t.Helper()
	sub := &coffer.Subscription{ID: coffer.NewFileID(), BucketID: bucket, Events: types,
		URL: "http://127.0.0.1:1/hook", Secret: "0123456789abcdef0123"}
	must(t, o.CreateSubscription(t.Context(), sub))
	return sub
}

// claimAll claims every delivery due within the next minute.
func claimAll(t *testing.T, o meta.Outbox) []*meta.Claim {
	t.Helper()
	now := time.Now().Add(time.Minute)
	cs, err := o.ClaimDeliveries(t.Context(), now, now.Add(time.Minute), 1000)
	must(t, err)
	return cs
}

func decodeEvent(t *testing.T, c *meta.Claim) *coffer.Event {
	t.Helper()
	ev, err := payload.Decode(c.Payload)
	if err != nil {
		t.Fatalf("payload %s: %v", c.Payload, err)
	}
	if ev.ID != c.Delivery.EventID || ev.Type != c.Delivery.EventType {
		t.Fatalf("payload %s does not match delivery %+v", c.Payload, c.Delivery)
	}
	return ev
}

func eventTypes(t *testing.T, cs []*meta.Claim) []coffer.EventType {
	t.Helper()
	out := []coffer.EventType{}
	for _, c := range cs {
		out = append(out, decodeEvent(t, c).Type)
	}
	return out
}

func testEventPerChange(t *testing.T, s meta.Store) {
	o := asOutbox(t, s)
	var hooks atomic.Int32
	o.OnEvent(func() { hooks.Add(1) })
	sub := subscribe(t, o, "")
	ctx := coffer.WithActor(t.Context(), &coffer.Principal{Role: "user", UserID: "u-7"})
	f := newFile(coffer.DefaultBucketID, "a.txt")
	must(t, o.BeginUpload(ctx, f.BlobKey, nil))
	must(t, o.CreateFiles(ctx, []*coffer.File{f}))
	name := "b.txt"
	_, err := o.UpdateFile(ctx, f.ID, coffer.FileUpdate{Name: &name})
	must(t, err)
	key := newKey()
	must(t, o.BeginUpload(ctx, key, nil))
	_, _, err = o.CommitUpload(ctx, f.ID, key, coffer.FileUpdate{BlobKey: &key})
	must(t, err)
	_, err = o.DeleteFile(ctx, f.ID)
	must(t, err)
	must(t, o.CreateBucket(ctx, coffer.NewBucket("evb")))
	_, err = o.UpdateBucket(ctx, "evb", coffer.BucketUpdate{})
	must(t, err)
	must(t, o.DeleteBucket(ctx, "evb"))
	must(t, o.AbortUpload(ctx, newKey()))

	cs := claimAll(t, o)
	want := []coffer.EventType{coffer.FileCreated, coffer.FileMetadataUpdated, coffer.FileReplaced,
		coffer.FileDeleted, coffer.BucketCreated, coffer.BucketDeleted}
	if got := eventTypes(t, cs); !reflect.DeepEqual(got, want) {
		t.Fatalf("events = %v, want %v", got, want)
	}
	if n := hooks.Load(); n != int32(len(want)) {
		t.Errorf("OnEvent ran %d times, want %d", n, len(want))
	}
	checkEventBodies(t, cs, sub, f)
}

func checkEventBodies(t *testing.T, cs []*meta.Claim, sub *coffer.Subscription, f *coffer.File) {
	t.Helper()
	seen := map[string]bool{}
	for i, c := range cs {
		ev := decodeEvent(t, c)
		if seen[ev.ID] || c.Delivery.SubscriptionID != sub.ID || c.URL != sub.URL || c.Secret != sub.Secret {
			t.Fatalf("claim %d: %+v (duplicate event id or wrong subscription)", i, c)
		}
		seen[ev.ID] = true
		if ev.Actor != (coffer.Actor{Role: "user", UserID: "u-7"}) || ev.Time.IsZero() {
			t.Errorf("%s: actor %+v time %v", ev.Type, ev.Actor, ev.Time)
		}
		switch ev.Type {
		case coffer.FileCreated, coffer.FileDeleted:
			if ev.File == nil || ev.File.ID != f.ID || ev.Before != nil || ev.BucketID != f.BucketID {
				t.Errorf("%s: file %+v before %+v", ev.Type, ev.File, ev.Before)
			}
		case coffer.FileMetadataUpdated, coffer.FileReplaced:
			if ev.File == nil || ev.Before == nil || ev.File.UpdatedAt.Before(ev.Before.UpdatedAt) {
				t.Errorf("%s: file %+v before %+v", ev.Type, ev.File, ev.Before)
			}
		case coffer.BucketCreated, coffer.BucketDeleted:
			if ev.Bucket == nil || ev.Bucket.ID != "evb" || ev.BucketID != "evb" || ev.File != nil {
				t.Errorf("%s: bucket %+v", ev.Type, ev.Bucket)
			}
		}
		if c.Delivery.Attempts != 1 || c.Delivery.State != coffer.DeliveryPending {
			t.Errorf("claim %d: attempts %d state %s", i, c.Delivery.Attempts, c.Delivery.State)
		}
	}
	if ev := decodeEvent(t, cs[1]); ev.Before.Name != "a.txt" || ev.File.Name != "b.txt" {
		t.Errorf("metadata_updated: before %q after %q", ev.Before.Name, ev.File.Name)
	}
}

func testNoSubscriptionNoEvent(t *testing.T, s meta.Store) {
	o := asOutbox(t, s)
	createNames(t, o, coffer.DefaultBucketID, "x")
	subscribe(t, o, "")
	if cs := claimAll(t, o); len(cs) != 0 {
		t.Fatalf("%d deliveries for a change made before any subscription", len(cs))
	}
	createNames(t, o, coffer.DefaultBucketID, "y")
	if cs := claimAll(t, o); len(cs) != 1 {
		t.Fatalf("%d deliveries, want 1", len(cs))
	}
}

func testOutboxFilters(t *testing.T, s meta.Store) {
	o := asOutbox(t, s)
	mustBucket(t, o, "b1")
	mustBucket(t, o, "b2")
	all := subscribe(t, o, "")
	b1 := subscribe(t, o, "b1")
	del := subscribe(t, o, "", coffer.FileDeleted, coffer.BucketDeleted)
	f1 := createNames(t, o, "b1", "one")[0]
	createNames(t, o, "b2", "two")
	_, err := o.DeleteFile(t.Context(), f1.ID)
	must(t, err)
	got := map[string][]coffer.EventType{}
	for _, c := range claimAll(t, o) {
		got[c.Delivery.SubscriptionID] = append(got[c.Delivery.SubscriptionID], c.Delivery.EventType)
	}
	want := map[string][]coffer.EventType{
		all.ID: {coffer.FileCreated, coffer.FileCreated, coffer.FileDeleted},
		b1.ID:  {coffer.FileCreated, coffer.FileDeleted},
		del.ID: {coffer.FileDeleted},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("deliveries per subscription = %v, want %v", got, want)
	}
}

func testFailedChangeNoEvent(t *testing.T, s meta.Store) {
	o := asOutbox(t, s)
	subscribe(t, o, "")
	f := createNames(t, o, coffer.DefaultBucketID, "exists")[0]
	claimAll(t, o)
	ctx := t.Context()
	dup := newFile(coffer.DefaultBucketID, "dup")
	dup.ID = f.ID
	fresh := newFile(coffer.DefaultBucketID, "fresh")
	must(t, o.BeginUpload(ctx, dup.BlobKey, nil))
	must(t, o.BeginUpload(ctx, fresh.BlobKey, nil))
	wantCode(t, o.CreateFiles(ctx, []*coffer.File{fresh, dup}), coffer.ECONFLICT)
	wantCode(t, o.CreateFiles(ctx, []*coffer.File{dup}), coffer.ECONFLICT)
	wantCode(t, o.CreateFiles(ctx, []*coffer.File{newFile(coffer.DefaultBucketID, "no intent")}), coffer.EABORTED)
	wrong := "not-the-key"
	key := newKey()
	must(t, o.BeginUpload(ctx, key, nil))
	_, _, err := o.CommitUpload(ctx, f.ID, key, coffer.FileUpdate{BlobKey: &key, IfBlobKey: &wrong})
	wantCode(t, err, coffer.EABORTED)
	_, err = o.DeleteFile(ctx, coffer.NewFileID())
	wantCode(t, err, coffer.ENOTFOUND)
	wantCode(t, o.CreateBucket(ctx, coffer.NewBucket(coffer.DefaultBucketID)), coffer.ECONFLICT)
	wantCode(t, o.DeleteBucket(ctx, coffer.DefaultBucketID), coffer.EINUSE)
	if cs := claimAll(t, o); len(cs) != 0 {
		t.Fatalf("failed changes left %d deliveries: %v", len(cs), eventTypes(t, cs))
	}
}

func testOutboxLease(t *testing.T, s meta.Store) {
	o := asOutbox(t, s)
	subscribe(t, o, "")
	createNames(t, o, coffer.DefaultBucketID, "leased")
	now := time.Now().Add(time.Second)
	cs, err := o.ClaimDeliveries(t.Context(), now, now.Add(time.Minute), 10)
	must(t, err)
	if len(cs) != 1 {
		t.Fatalf("claimed %d, want 1", len(cs))
	}
	again, err := o.ClaimDeliveries(t.Context(), now.Add(30*time.Second), now.Add(time.Hour), 10)
	must(t, err)
	if len(again) != 0 {
		t.Fatalf("a leased delivery was claimed again before its lease ended")
	}
	later, err := o.ClaimDeliveries(t.Context(), now.Add(2*time.Minute), now.Add(3*time.Minute), 10)
	must(t, err)
	if len(later) != 1 || later[0].Delivery.Attempts != 2 {
		t.Fatalf("after the lease ended: %d claims (attempts %v), want 1 with attempts 2", len(later), later)
	}
	// A single node restarting releases every lease at once.
	n, err := o.ReleaseClaims(t.Context(), now.Add(2*time.Minute))
	must(t, err)
	if n != 1 {
		t.Fatalf("released %d claims, want 1", n)
	}
	if again, err = o.ClaimDeliveries(t.Context(), now.Add(2*time.Minute), now.Add(3*time.Minute), 10); err != nil || len(again) != 1 || again[0].Delivery.Attempts != 3 {
		t.Fatalf("after release: %v %v", again, err)
	}
	later = again
	// The first claimer's late outcome must not overwrite the second claim.
	must(t, o.FinishDelivery(t.Context(), cs[0], meta.Outcome{At: now, State: coffer.DeliveryDelivered, Status: 200}))
	d := onlyDelivery(t, o, later[0].Delivery.SubscriptionID)
	if d.State != coffer.DeliveryPending || d.Attempts != 3 {
		t.Fatalf("stale outcome applied: %+v", d)
	}
}

func onlyDelivery(t *testing.T, o meta.Outbox, sub string) *coffer.Delivery {
	t.Helper()
	ds, err := o.ListDeliveries(t.Context(), meta.DeliveryQuery{SubscriptionID: sub})
	must(t, err)
	if len(ds) != 1 {
		t.Fatalf("%d deliveries, want 1", len(ds))
	}
	return ds[0]
}

func testOutboxOutcomes(t *testing.T, s meta.Store) {
	o := asOutbox(t, s)
	sub := subscribe(t, o, "")
	createNames(t, o, coffer.DefaultBucketID, "o")
	ctx := t.Context()
	c := claimAll(t, o)[0]
	at := time.Now().UTC().Truncate(time.Microsecond)
	retry := at.Add(time.Hour)
	must(t, o.FinishDelivery(ctx, c, meta.Outcome{At: at, State: coffer.DeliveryPending, NextAt: retry, Status: 500, Error: "HTTP 500"}))
	if cs := claimAll(t, o); len(cs) != 0 {
		t.Fatalf("claimed before its retry time")
	}
	d := onlyDelivery(t, o, sub.ID)
	if d.LastStatus != 500 || d.LastError != "HTTP 500" || !d.NextAttemptAt.Equal(retry) || d.Attempts != 1 {
		t.Fatalf("after a failed attempt: %+v", d)
	}
	cs, err := o.ClaimDeliveries(ctx, retry, retry.Add(time.Minute), 10)
	must(t, err)
	must(t, o.FinishDelivery(ctx, cs[0], meta.Outcome{At: retry, State: coffer.DeliveryDead, Status: 0, Error: "refused"}))
	if d := onlyDelivery(t, o, sub.ID); d.State != coffer.DeliveryDead || d.Attempts != 2 {
		t.Fatalf("dead delivery: %+v", d)
	}
	ds, err := o.ListDeliveries(ctx, meta.DeliveryQuery{SubscriptionID: sub.ID, State: coffer.DeliveryPending})
	must(t, err)
	if len(ds) != 0 {
		t.Fatalf("state filter returned %d", len(ds))
	}
	wantCode(t, o.Redeliver(ctx, sub.ID, d.ID+1000, at), coffer.ENOTFOUND)
	wantCode(t, o.Redeliver(ctx, coffer.NewFileID(), d.ID, at), coffer.ENOTFOUND)
	must(t, o.Redeliver(ctx, sub.ID, d.ID, at))
	cs = claimAll(t, o)
	if len(cs) != 1 || cs[0].Delivery.Attempts != 1 {
		t.Fatalf("redelivered: %d claims %v", len(cs), cs)
	}
	must(t, o.FinishDelivery(ctx, cs[0], meta.Outcome{At: at, State: coffer.DeliveryDelivered, Status: 204}))
	if d := onlyDelivery(t, o, sub.ID); d.State != coffer.DeliveryDelivered || d.LastStatus != 204 || d.LastError != "" {
		t.Fatalf("delivered: %+v", d)
	}
}

func testConcurrentClaims(t *testing.T, s meta.Store) {
	o := asOutbox(t, s)
	subscribe(t, o, "")
	names := make([]string, 60)
	for i := range names {
		names[i] = "c" + string(rune('a'+i%26)) + string(rune('a'+i/26))
	}
	createNames(t, o, coffer.DefaultBucketID, names...)
	var mu sync.Mutex
	var got []int64
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				now := time.Now().Add(time.Minute)
				cs, err := o.ClaimDeliveries(context.Background(), now, now.Add(time.Hour), 7)
				if err != nil {
					t.Error(err)
					return
				}
				if len(cs) == 0 {
					return
				}
				mu.Lock()
				for _, c := range cs {
					got = append(got, c.Delivery.ID)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	sort.Slice(got, func(i, j int) bool { return got[i] < got[j] })
	for i := 1; i < len(got); i++ {
		if got[i] == got[i-1] {
			t.Fatalf("delivery %d claimed twice", got[i])
		}
	}
	if len(got) != len(names) {
		t.Fatalf("claimed %d deliveries, want %d", len(got), len(names))
	}
}

func testSubscriptions(t *testing.T, s meta.Store) {
	o := asOutbox(t, s)
	ctx := t.Context()
	a := subscribe(t, o, "", coffer.FileCreated, coffer.FileDeleted)
	b := subscribe(t, o, coffer.DefaultBucketID)
	wantCode(t, o.CreateSubscription(ctx, &coffer.Subscription{ID: a.ID, URL: a.URL, Secret: a.Secret}), coffer.ECONFLICT)
	got, err := o.GetSubscription(ctx, a.ID)
	must(t, err)
	if got.Secret != "" || !reflect.DeepEqual(got.Events, a.Events) || got.URL != a.URL || !got.CreatedAt.Equal(a.CreatedAt) {
		t.Fatalf("GetSubscription = %+v, want %+v without secret", got, a)
	}
	checkTime(t, "subscription CreatedAt", got.CreatedAt)
	list, err := o.ListSubscriptions(ctx)
	must(t, err)
	if len(list) != 2 || list[0].ID != a.ID || list[1].ID != b.ID || len(list[1].Events) != 0 {
		t.Fatalf("ListSubscriptions = %+v", list)
	}
	createNames(t, o, coffer.DefaultBucketID, "s")
	must(t, o.DeleteSubscription(ctx, a.ID))
	wantCode(t, o.DeleteSubscription(ctx, a.ID), coffer.ENOTFOUND)
	_, err = o.GetSubscription(ctx, a.ID)
	wantCode(t, err, coffer.ENOTFOUND)
	ds, err := o.ListDeliveries(ctx, meta.DeliveryQuery{SubscriptionID: a.ID})
	must(t, err)
	if len(ds) != 0 {
		t.Fatalf("a deleted subscription kept %d deliveries", len(ds))
	}
	if cs := claimAll(t, o); len(cs) != 1 || cs[0].Delivery.SubscriptionID != b.ID {
		t.Fatalf("claims after deleting a subscription: %v", cs)
	}
}

func testOutboxPrune(t *testing.T, s meta.Store) {
	o := asOutbox(t, s)
	ctx := t.Context()
	sub := subscribe(t, o, "")
	createNames(t, o, coffer.DefaultBucketID, "p1", "p2")
	cs := claimAll(t, o)
	at := time.Now().UTC()
	must(t, o.FinishDelivery(ctx, cs[0], meta.Outcome{At: at, State: coffer.DeliveryDelivered, Status: 200}))
	n, err := o.Prune(ctx, at.Add(-time.Minute))
	must(t, err)
	if n != 0 {
		t.Fatalf("pruned %d deliveries newer than the cut-off", n)
	}
	n, err = o.Prune(ctx, at.Add(time.Hour))
	must(t, err)
	if n != 1 {
		t.Fatalf("pruned %d, want 1 (the pending one stays)", n)
	}
	ds, err := o.ListDeliveries(ctx, meta.DeliveryQuery{SubscriptionID: sub.ID})
	must(t, err)
	if len(ds) != 1 || ds[0].ID != cs[1].Delivery.ID {
		t.Fatalf("after prune: %+v", ds)
	}
}

// A redelivery while an attempt runs is refused; once the lease ended it is allowed,
// and the superseded claim's late outcome is ignored.
func testRedeliverInFlight(t *testing.T, s meta.Store) {
	o := asOutbox(t, s)
	sub := subscribe(t, o, "")
	createNames(t, o, coffer.DefaultBucketID, "x")
	now := time.Now().Add(time.Second)
	first, err := o.ClaimDeliveries(t.Context(), now, now.Add(time.Minute), 10)
	must(t, err)
	id := first[0].Delivery.ID
	wantCode(t, o.Redeliver(t.Context(), sub.ID, id, now), coffer.EINUSE)
	if again, err := o.ClaimDeliveries(t.Context(), now, now.Add(time.Minute), 10); err != nil || len(again) != 0 {
		t.Fatalf("claimed while its attempt runs: %v %v", again, err)
	}
	later := now.Add(2 * time.Minute) // the lease has ended
	must(t, o.Redeliver(t.Context(), sub.ID, id, later))
	second, err := o.ClaimDeliveries(t.Context(), later, later.Add(time.Minute), 10)
	must(t, err)
	if len(second) != 1 || second[0].Delivery.Attempts != 1 || second[0].Token == first[0].Token {
		t.Fatalf("after redelivery: %+v (first token %d)", second, first[0].Token)
	}
	must(t, o.FinishDelivery(t.Context(), first[0], meta.Outcome{At: later, State: coffer.DeliveryPending, NextAt: later, Status: 500, Error: "stale"}))
	if d := onlyDelivery(t, o, sub.ID); d.LastError != "" || !d.NextAttemptAt.Equal(second[0].Delivery.NextAttemptAt) {
		t.Fatalf("a superseded claim's outcome was applied: %+v", d)
	}
	if third, err := o.ClaimDeliveries(t.Context(), later, later.Add(time.Minute), 10); err != nil || len(third) != 0 {
		t.Fatalf("claimed while the redelivery runs: %v %v", third, err)
	}
}

// Deleting a subscription while a change commits must not make the change fail.
func testSubscriptionDeletedDuringChange(t *testing.T, s meta.Store) {
	o := asOutbox(t, s)
	for i := 0; i < 40; i++ {
		subs := make([]*coffer.Subscription, 4)
		for j := range subs {
			subs[j] = subscribe(t, o, "")
		}
		files := make([]*coffer.File, 20)
		for j := range files {
			files[j] = newFile(coffer.DefaultBucketID, "race")
			must(t, o.BeginUpload(t.Context(), files[j].BlobKey, nil))
		}
		var wg sync.WaitGroup
		var cerr error
		wg.Add(1 + len(subs))
		go func() { defer wg.Done(); cerr = o.CreateFiles(context.Background(), files) }()
		for _, sub := range subs {
			go func() { defer wg.Done(); _ = o.DeleteSubscription(context.Background(), sub.ID) }()
		}
		wg.Wait()
		if cerr != nil {
			t.Fatalf("round %d: a change failed because a subscription was deleted meanwhile: %v", i, cerr)
		}
	}
}
