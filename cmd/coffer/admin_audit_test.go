package main

import (
	"testing"
	"time"
)

// FuzzParseWhen: parseWhen never panics, and what it accepts is a valid timestamp:
// now minus a positive duration, or the RFC 3339 time given (read back equal).
func FuzzParseWhen(f *testing.F) {
	for _, s := range []string{"", "1h", "90m", "-1h", "0s", "2026-11-25T06:00:00Z", "2026-11-25T06:00:00.5+02:00",
		"9999-12-31T23:59:59Z", "0000-01-01T00:00:00Z", "1e309h", "yesterday"} {
		f.Add(s)
	}
	now := time.Date(2026, 11, 25, 6, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, s string) {
		ts, err := parseWhen("--since", s, now)
		if err != nil || ts == nil {
			if s == "" && (err != nil || ts != nil) {
				t.Fatalf("empty: %v %v", ts, err)
			}
			return
		}
		if err := ts.CheckValid(); err != nil {
			t.Fatalf("%q gave an invalid timestamp %v: %v", s, ts, err)
		}
		if d, derr := time.ParseDuration(s); derr == nil {
			if d <= 0 || !ts.AsTime().Equal(now.Add(-d)) {
				t.Fatalf("%q: %v, want now - %v", s, ts.AsTime(), d)
			}
			return
		}
		if want, perr := time.Parse(time.RFC3339Nano, s); perr != nil || !ts.AsTime().Equal(want) {
			t.Fatalf("%q: %v, want %v (%v)", s, ts.AsTime(), want, perr)
		}
	})
}
