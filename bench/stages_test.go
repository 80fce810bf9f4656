package bench

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestParseStages(t *testing.T) {
	tests := []struct {
		in      string
		want    []Stage
		wantErr string
	}{
		{in: "10@1m", want: []Stage{{10, time.Minute}}},
		{in: " 10@1m , 0@30s,40@3m ", want: []Stage{{10, time.Minute}, {0, 30 * time.Second}, {40, 3 * time.Minute}}},
		{in: "10@1m,0@1m,40@3m,40@1m,0@1m,3000@1m,0@1m", want: []Stage{{10, time.Minute}, {0, time.Minute},
			{40, 3 * time.Minute}, {40, time.Minute}, {0, time.Minute}, {3000, time.Minute}, {0, time.Minute}}},
		{in: "5@0s,5@1s", want: []Stage{{5, 0}, {5, time.Second}}},
		{in: "", wantErr: "empty"},
		{in: "10", wantErr: "TARGET@DURATION"},
		{in: "x@1m", wantErr: "not an integer"},
		{in: "10@", wantErr: "Go duration"},
		{in: "10@5", wantErr: "Go duration"},
		{in: "10@-1s", wantErr: "must not be negative"},
		{in: "-3@1s", wantErr: "between 0 and"},
		{in: "100001@1s", wantErr: "between 0 and"},
		{in: "10@1m,,5@1s", wantErr: "item 2"},
		{in: "10@0s", wantErr: "total duration"},
		{in: "0@1m,0@1s", wantErr: "every target is 0"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseStages(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("ParseStages(%q) error = %v, want one containing %q", tc.in, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseStages(%q): %v", tc.in, err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("stage %d = %v, want %v", i, got[i], tc.want[i])
				}
			}
		})
	}
}

func TestScheduleLevel(t *testing.T) {
	s := NewSchedule([]Stage{{10, 10 * time.Second}, {0, 10 * time.Second}, {40, 0}, {40, 5 * time.Second}})
	if s.Duration() != 25*time.Second || s.Peak() != 40 {
		t.Fatalf("duration %s peak %d, want 25s and 40", s.Duration(), s.Peak())
	}
	tests := []struct {
		at   time.Duration
		want int
	}{
		{0, 0}, {time.Second, 1}, {5 * time.Second, 5}, {9500 * time.Millisecond, 10}, // 9.5 rounds to 10
		{10 * time.Second, 10}, {15 * time.Second, 5}, {20 * time.Second, 40}, {24 * time.Second, 40},
		{time.Hour, 40}, // after the end: the last target
	}
	for _, tc := range tests {
		if got := s.Level(tc.at); got != tc.want {
			t.Errorf("Level(%s) = %d, want %d", tc.at, got, tc.want)
		}
	}
}

func TestRampHold(t *testing.T) {
	tests := []struct {
		name       string
		target     int
		ramp, hold time.Duration
		levels     map[time.Duration]int
		total      time.Duration
	}{
		{"ramp then hold", 100, 10 * time.Second, 60 * time.Second,
			map[time.Duration]int{0: 1, 5 * time.Second: 51, 10 * time.Second: 100, 69 * time.Second: 100}, 70 * time.Second},
		{"no ramp", 50, 0, 10 * time.Second, map[time.Duration]int{0: 50, 9 * time.Second: 50}, 10 * time.Second},
		{"ramp only", 11, 10 * time.Second, 0, map[time.Duration]int{0: 1, 5 * time.Second: 6}, 10 * time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := RampHold(tc.target, tc.ramp, tc.hold)
			if err := ValidateStages(st); err != nil {
				t.Fatal(err)
			}
			s := NewSchedule(st)
			if s.Duration() != tc.total || s.Peak() != tc.target {
				t.Errorf("duration %s peak %d, want %s and %d", s.Duration(), s.Peak(), tc.total, tc.target)
			}
			for at, want := range tc.levels {
				if got := s.Level(at); got != want {
					t.Errorf("Level(%s) = %d, want %d", at, got, want)
				}
			}
		})
	}
}

func TestStageJSONRoundTrip(t *testing.T) {
	in := []Stage{{10, 90 * time.Second}, {0, 0}}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != `["10@1m30s","0@0s"]` {
		t.Errorf("JSON %s", b)
	}
	var out []Stage
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if len(out) != 2 || out[0] != in[0] || out[1] != in[1] {
		t.Errorf("round trip %v, want %v", out, in)
	}
	if err := json.Unmarshal([]byte(`["ten@1s"]`), &out); err == nil {
		t.Error("bad stage accepted")
	}
}
