package httpserve

import (
	"math/rand/v2"
	"net/http"
	"testing"
	"time"
)

// AppendHTTPDate writes what time.Format(http.TimeFormat) writes.
func TestAppendHTTPDate(t *testing.T) {
	times := []time.Time{time.Unix(0, 0), time.Unix(1, 0), time.Date(9, 3, 4, 5, 6, 7, 0, time.UTC),
		time.Date(2026, 11, 23, 23, 59, 59, 999, time.FixedZone("x", 5*3600)), time.Date(-3, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(12345, 1, 1, 0, 0, 0, 0, time.UTC)}
	r := rand.New(rand.NewPCG(1, 2))
	for range 10000 {
		times = append(times, time.Unix(r.Int64N(300e9)-62e9, 0))
	}
	for _, tm := range times {
		if got, want := string(AppendHTTPDate(nil, tm)), tm.UTC().Format(http.TimeFormat); got != want {
			t.Fatalf("%v: %q, want %q", tm, got, want)
		}
	}
}

// FuzzNormalizeDates: any conditional date header is either left alone or rewritten
// to an http.TimeFormat date that http.ParseTime reads; never a panic.
func FuzzNormalizeDates(f *testing.F) {
	f.Add("Mon, 02 Jan 2006 15:04:05 UTC")
	f.Add("Mon, 02 Jan 2006 15:04:05 +0100")
	f.Add("Mon, 02 Jan 2006 15:04:05 GMT")
	f.Add(`"etag"`)
	f.Fuzz(func(t *testing.T, v string) {
		h := http.Header{}
		h.Set("If-Modified-Since", v)
		NormalizeDates(h)
		got := h.Get("If-Modified-Since")
		if got == v {
			return
		}
		if _, err := http.ParseTime(got); err != nil {
			t.Fatalf("%q rewritten to %q, which does not parse", v, got)
		}
	})
}
