package audit

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"
	"time"
)

// sample returns a typical record.
func sample(i int) Record {
	return Record{Time: time.Date(2026, 11, 25, 6, 0, 0, i, time.UTC), Tenant: "acme", Site: "www",
		Host: "www.example.com", Method: "GET", Path: "/assets/app.js", Target: "http:https://origin.example",
		Status: 200, Bytes: 12345, Duration: 1.25, Cache: "HIT", Client: "192.0.2.1", RequestID: "req-1"}
}

// roundTrip decodes line into a Record.
func roundTrip(t testing.TB, line []byte) Record {
	t.Helper()
	var got Record
	if err := json.Unmarshal(line, &got); err != nil {
		t.Fatalf("appendRecord wrote invalid JSON %q: %v", line, err)
	}
	return got
}

func TestAppendMatchesJSON(t *testing.T) {
	odd := sample(7)
	odd.Path = "/a\"b\\c\n\t\r\x00\x1f<>&\u2028\u2029é😀"
	odd.UserID = "user-1"
	odd.Time = time.Date(2026, 1, 2, 3, 4, 5, 6, time.FixedZone("X", 3600))
	bad := sample(1)
	bad.Host = "a\xffb\xc3"
	for name, r := range map[string]Record{"typical": sample(0), "escapes": odd, "zero": {}, "invalid utf8": bad} {
		t.Run(name, func(t *testing.T) {
			line := appendRecord(nil, &r)
			if line[len(line)-1] != '\n' {
				t.Fatalf("no newline: %q", line)
			}
			want, _ := json.Marshal(r)
			var viaJSON Record
			json.Unmarshal(want, &viaJSON)
			got := roundTrip(t, line)
			if !got.Time.Equal(viaJSON.Time) {
				t.Fatalf("time %v, encoding/json %v", got.Time, viaJSON.Time)
			}
			got.Time, viaJSON.Time = time.Time{}, time.Time{}
			if !reflect.DeepEqual(got, viaJSON) {
				t.Fatalf("decoded\n%+v\nencoding/json gives\n%+v", got, viaJSON)
			}
		})
	}
}

func TestAppendNonFiniteDuration(t *testing.T) {
	for _, d := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		r := sample(0)
		r.Duration = d
		if got := roundTrip(t, appendRecord(nil, &r)); got.Duration != 0 {
			t.Fatalf("duration %v written as %v, want 0", d, got.Duration)
		}
	}
}

func FuzzAppendRecord(f *testing.F) {
	f.Add("/a", "h", "\x00\"\\", 200, int64(1), 1.5, int64(0))
	f.Add("/\xff\u2028", "", "é", -1, int64(-5), -0.0, int64(1e18))
	f.Fuzz(func(t *testing.T, path, host, user string, status int, bytes int64, dur float64, ns int64) {
		r := sample(0)
		r.Path, r.Host, r.UserID, r.Status, r.Bytes, r.Duration = path, host, user, status, bytes, dur
		r.Time = time.Unix(0, ns).UTC()
		if r.Time.Year() > 9999 || r.Time.Year() < 0 {
			return // outside RFC 3339
		}
		got := roundTrip(t, appendRecord(nil, &r))
		if math.IsNaN(dur) || math.IsInf(dur, 0) {
			r.Duration = 0
		}
		want, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		var viaJSON Record
		if err := json.Unmarshal(want, &viaJSON); err != nil {
			t.Fatal(err)
		}
		if !got.Time.Equal(viaJSON.Time) {
			t.Fatalf("time %v, encoding/json %v", got.Time, viaJSON.Time)
		}
		got.Time, viaJSON.Time = time.Time{}, time.Time{}
		if !reflect.DeepEqual(got, viaJSON) {
			t.Fatalf("decoded\n%+v\nencoding/json gives\n%+v", got, viaJSON)
		}
	})
}
