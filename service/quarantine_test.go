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

	// Beside another image at each crash: half a point each.
	for i := range 3 {
		q.record("bystander", crash(2))
		if quarantined("bystander") {
			t.Fatalf("quarantined after %d shared crashes", i+1)
		}
	}
	q.record("bystander", crash(2))
	if !quarantined("bystander") {
		t.Fatal("not quarantined after four shared crashes (2 points)")
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
