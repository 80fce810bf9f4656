package service

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/imaging"
)

func TestQuarantine(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	q := newQuarantine(func() time.Time { return now }, slog.New(slog.NewTextHandler(io.Discard, nil)))
	crash := func(n int) error {
		return &coffer.Error{Code: coffer.EUNAVAILABLE, Message: "worker died", Err: &imaging.CrashError{InFlight: n, Err: errors.New("killed")}}
	}
	quarantined := func(etag string) bool { return coffer.ErrorCode(q.check(etag)) == coffer.EUNSUPPORTED }

	// Alone in the worker when it died, twice: quarantined for a day.
	q.record("poison", crash(1))
	if quarantined("poison") {
		t.Fatal("quarantined after one crash")
	}
	q.record("poison", crash(1))
	if !quarantined("poison") {
		t.Fatal("not quarantined after two crashes alone")
	}
	now = now.Add(quarantineFor - time.Minute)
	if !quarantined("poison") {
		t.Fatal("quarantine ended early")
	}
	now = now.Add(2 * time.Minute)
	if quarantined("poison") {
		t.Fatal("quarantine did not end")
	}

	// Beside another image at each crash: half a point each, but never quarantined
	// without a crash alone, or an attacker who crashes the worker with an image of
	// their own could quarantine any image they can read by requesting both at once.
	for i := range 8 {
		q.record("bystander", crash(2))
		if quarantined("bystander") {
			t.Fatalf("quarantined after %d shared crashes and none alone", i+1)
		}
	}
	// Shared crashes count once the image has crashed the worker alone.
	q.record("suspect", crash(2))
	q.record("suspect", crash(2))
	q.record("suspect", crash(1)) // 2 points, one crash alone
	if !quarantined("suspect") {
		t.Fatal("not quarantined after 2 points with a crash alone")
	}
	q.record("suspect2", crash(1))
	q.record("suspect2", crash(3))
	if quarantined("suspect2") {
		t.Fatal("quarantined at 1.33 points")
	}
	q.record("suspect2", crash(2))
	q.record("suspect2", crash(4))
	if !quarantined("suspect2") {
		t.Fatal("not quarantined at 2.08 points with a crash alone")
	}

	// Crashes more than a window apart start over; other errors never count.
	q.record("rare", crash(1))
	now = now.Add(quarantineWindow + time.Minute)
	q.record("rare", crash(1))
	q.record("rare", coffer.Errorf(coffer.EUNSUPPORTED, "damaged"))
	q.record("rare", &imaging.RetryLater{After: time.Second, Err: coffer.Errorf(coffer.EUNAVAILABLE, "held back")})
	if quarantined("rare") {
		t.Fatal("crashes an hour apart, or other errors, quarantined an image")
	}

	// Bounded; a flood of new suspects does not push out a quarantined image.
	q.record("poison2", crash(1))
	q.record("poison2", crash(1))
	for i := range quarantineMax + 50 {
		q.record(fmt.Sprint("e", i), crash(1))
		now = now.Add(time.Millisecond)
	}
	if len(q.m) > quarantineMax {
		t.Fatalf("%d sources tracked, limit %d", len(q.m), quarantineMax)
	}
	if !quarantined("poison2") {
		t.Fatal("a flood of suspects evicted a quarantined image")
	}
}
