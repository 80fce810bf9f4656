package bench

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Stage is one leg of a load schedule: the level (workers, or a share of the open-loop
// rate) moves linearly from the previous stage's Target to this Target over Duration.
type Stage struct {
	Target   int
	Duration time.Duration
}

// String formats s as ParseStages reads it.
func (s Stage) String() string { return fmt.Sprintf("%d@%s", s.Target, s.Duration) }

// maxStageTarget bounds one stage's level (a typo like 30000000 would start millions
// of goroutines).
const maxStageTarget = 100000

// ParseStages reads a schedule such as "10@1m,0@1m,40@3m": comma-separated
// TARGET@DURATION items, where TARGET is a non-negative integer and DURATION a Go
// duration (0 jumps straight to TARGET). The first stage starts from level 0.
func ParseStages(s string) ([]Stage, error) {
	if strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf("stages: empty (want e.g. \"10@30s,10@1m,0@10s\")")
	}
	var out []Stage
	for i, item := range strings.Split(s, ",") {
		st, err := parseStage(strings.TrimSpace(item))
		if err != nil {
			return nil, fmt.Errorf("stages: item %d %q: %w", i+1, item, err)
		}
		out = append(out, st)
	}
	if err := ValidateStages(out); err != nil {
		return nil, err
	}
	return out, nil
}

func parseStage(item string) (Stage, error) {
	target, dur, ok := strings.Cut(item, "@")
	if !ok {
		return Stage{}, fmt.Errorf("want TARGET@DURATION, e.g. 40@3m")
	}
	n, err := strconv.Atoi(strings.TrimSpace(target))
	if err != nil {
		return Stage{}, fmt.Errorf("target %q is not an integer", target)
	}
	d, err := time.ParseDuration(strings.TrimSpace(dur))
	if err != nil {
		return Stage{}, fmt.Errorf("duration %q: want a Go duration such as 30s, 2m or 1m30s", dur)
	}
	return Stage{Target: n, Duration: d}, nil
}

// ValidateStages checks targets (0..100000), durations (non-negative) and that the
// schedule lasts a while and reaches a level above zero.
func ValidateStages(st []Stage) error {
	if len(st) == 0 {
		return fmt.Errorf("stages: none given")
	}
	var total time.Duration
	peak := 0
	for i, s := range st {
		if s.Target < 0 || s.Target > maxStageTarget {
			return fmt.Errorf("stages: item %d: target %d must be between 0 and %d", i+1, s.Target, maxStageTarget)
		}
		if s.Duration < 0 {
			return fmt.Errorf("stages: item %d: duration %s must not be negative", i+1, s.Duration)
		}
		total += s.Duration
		peak = max(peak, s.Target)
	}
	if total <= 0 {
		return fmt.Errorf("stages: total duration must be above zero")
	}
	if peak == 0 {
		return fmt.Errorf("stages: every target is 0, nothing would run")
	}
	return nil
}

// RampHold is the default schedule: from 1 worker up to target over ramp, then target
// for hold. A zero ramp starts at target.
func RampHold(target int, ramp, hold time.Duration) []Stage {
	if ramp <= 0 {
		return []Stage{{Target: target, Duration: 0}, {Target: target, Duration: hold}}
	}
	return []Stage{{Target: 1, Duration: 0}, {Target: target, Duration: ramp}, {Target: target, Duration: hold}}
}

// Schedule answers the level at any time of a validated list of stages.
type Schedule struct {
	stages []Stage
	total  time.Duration
	peak   int
}

// NewSchedule returns the schedule of st (which must pass ValidateStages).
func NewSchedule(st []Stage) Schedule {
	s := Schedule{stages: st}
	for _, x := range st {
		s.total += x.Duration
		s.peak = max(s.peak, x.Target)
	}
	return s
}

// Duration is the schedule's total length.
func (s Schedule) Duration() time.Duration { return s.total }

// Peak is the highest level of the schedule.
func (s Schedule) Peak() int { return s.peak }

// Stages returns the stages of s.
func (s Schedule) Stages() []Stage { return s.stages }

// LevelF is the exact (fractional) level at elapsed time t: linear within a stage,
// rising from the previous target; after the end, the last target.
func (s Schedule) LevelF(t time.Duration) float64 {
	from := 0.0
	for _, st := range s.stages {
		to := float64(st.Target)
		if t < st.Duration {
			return from + (to-from)*float64(t)/float64(st.Duration)
		}
		t -= st.Duration
		from = to
	}
	return from
}

// Level is the number of workers at elapsed time t: LevelF rounded to the nearest
// integer.
func (s Schedule) Level(t time.Duration) int {
	return int(s.LevelF(t) + 0.5)
}

// MarshalText writes s as TARGET@DURATION.
func (s Stage) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads TARGET@DURATION.
func (s *Stage) UnmarshalText(b []byte) error {
	st, err := parseStage(string(b))
	if err != nil {
		return fmt.Errorf("stage %q: %w", b, err)
	}
	*s = st
	return nil
}
