package sqlcore

import (
	"testing"
	"time"
)

func TestRebind(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{`SELECT 1`, `SELECT 1`},
		{`a = ? AND b = ?::uuid`, `a = $1 AND b = $2::uuid`},
		{`x = '?' AND y = ? AND z = "?" AND w = ?`, `x = '?' AND y = $1 AND z = "?" AND w = $2`},
		{`x LIKE ? ESCAPE '\' AND y = ''`, `x LIKE $1 ESCAPE '\' AND y = ''`},
		{`(bucket_id = '' OR bucket_id = ?) AND strpos(e, ?) > 0`, `(bucket_id = '' OR bucket_id = $1) AND strpos(e, $2) > 0`},
	} {
		if got := Rebind(tt.in); got != tt.want {
			t.Errorf("Rebind(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestTimeScan(t *testing.T) {
	want := time.Date(2026, 11, 24, 19, 0, 0, 123456000, time.UTC)
	for _, v := range []any{want.UnixMicro(), want.In(time.FixedZone("x", 3600))} {
		var got time.Time
		if err := (Time{&got}).Scan(v); err != nil || !got.Equal(want) || got.Location() != time.UTC {
			t.Errorf("Scan(%v) = %v, %v; want %v UTC", v, got, err, want)
		}
	}
	var got time.Time
	if err := (Time{&got}).Scan("2026"); err == nil {
		t.Error("Scan of a string succeeded")
	}
}
