package metatest

import (
	"reflect"
	"testing"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/meta"
)

type rejectionStore interface {
	meta.Store
	meta.Rejections
	meta.Outbox
}

// rejectionTests run against stores that implement meta.Rejections; others skip them.
var rejectionTests = []test{
	{"Rejections", testRejections},
}

func testRejections(t *testing.T, s meta.Store) {
	r, ok := s.(rejectionStore)
	if !ok {
		t.Skip("store does not implement meta.Rejections and meta.Outbox")
	}
	ctx := t.Context()
	empty, err := r.ListRejections(ctx, 0)
	must(t, err)
	if len(empty) != 0 {
		t.Fatalf("new store lists %d rejections", len(empty))
	}
	subscribe(t, r, coffer.DefaultBucketID, coffer.FileRejected)
	subscribe(t, r, "other-bucket", coffer.FileRejected)
	recs := []*coffer.Rejection{
		{ID: coffer.NewFileID(), BucketID: coffer.DefaultBucketID, Name: "a.exe", Role: "user", UserID: "u-1",
			Signature: "Eicar-Test-Signature", Size: 68},
		{ID: coffer.NewFileID(), BucketID: coffer.DefaultBucketID, Name: "b/ü.doc", FileID: coffer.NewFileID(),
			Role: "admin", Signature: "Win.Test.X", Size: 1 << 40},
		{ID: coffer.NewFileID(), BucketID: coffer.DefaultBucketID, Name: "c", Role: "public", Signature: "S", Size: 0},
	}
	for _, rec := range recs {
		must(t, r.RecordRejection(ctx, rec))
		if rec.Time.IsZero() || rec.Time.Location() != time.UTC {
			t.Fatalf("Time not set in UTC: %v", rec.Time)
		}
	}
	dup := *recs[0]
	wantCode(t, r.RecordRejection(ctx, &dup), coffer.ECONFLICT)

	all, err := r.ListRejections(ctx, 0)
	must(t, err)
	if len(all) != len(recs) {
		t.Fatalf("listed %d rejections, want %d", len(all), len(recs))
	}
	byID := map[string]*coffer.Rejection{}
	for i, got := range all {
		byID[got.ID] = got
		if i > 0 && (got.Time.After(all[i-1].Time) || got.Time.Equal(all[i-1].Time) && got.ID > all[i-1].ID) {
			t.Fatalf("not newest first: %v (%s) after %v (%s)", got.Time, got.ID, all[i-1].Time, all[i-1].ID)
		}
	}
	for _, rec := range recs {
		if got := byID[rec.ID]; got == nil || !reflect.DeepEqual(*got, *rec) {
			t.Fatalf("listed %+v, want %+v", got, rec)
		}
	}
	two, err := r.ListRejections(ctx, 2)
	must(t, err)
	if len(two) != 2 || two[0].ID != all[0].ID || two[1].ID != all[1].ID {
		t.Fatalf("limit 2: %+v", two)
	}

	// One file.rejected event per record (the duplicate rolled back), only for the
	// subscription of its bucket, carrying the record and the uploader as actor.
	cs := claimAll(t, r)
	if len(cs) != len(recs) {
		t.Fatalf("%d deliveries, want %d", len(cs), len(recs))
	}
	for _, c := range cs {
		ev := decodeEvent(t, c)
		rec := byID[ev.Rejection.ID]
		if ev.Type != coffer.FileRejected || ev.BucketID != coffer.DefaultBucketID || ev.File != nil || rec == nil ||
			ev.Actor != (coffer.Actor{Role: rec.Role, UserID: rec.UserID}) || !reflect.DeepEqual(*ev.Rejection, *rec) ||
			!ev.Time.Equal(rec.Time) {
			t.Fatalf("event %s for %+v", c.Payload, rec)
		}
	}
}
