package httpapi

import (
	"math/rand/v2"
	"net/http"
	"testing"
	"time"
)

// appendHTTPDate writes what time.Format(http.TimeFormat) writes.
func TestAppendHTTPDate(t *testing.T) {
	times := []time.Time{time.Unix(0, 0), time.Unix(1, 0), time.Date(9, 3, 4, 5, 6, 7, 0, time.UTC),
		time.Date(2026, 11, 23, 23, 59, 59, 999, time.FixedZone("x", 5*3600)), time.Date(-3, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(12345, 1, 1, 0, 0, 0, 0, time.UTC)}
	r := rand.New(rand.NewPCG(1, 2))
	for range 10000 {
		times = append(times, time.Unix(r.Int64N(300e9)-62e9, 0))
	}
	for _, tm := range times {
		if got, want := string(appendHTTPDate(nil, tm)), tm.UTC().Format(http.TimeFormat); got != want {
			t.Fatalf("%v: %q, want %q", tm, got, want)
		}
	}
}
