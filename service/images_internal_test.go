package service

import (
	"testing"
	"time"

	"github.com/coffer/coffer/imaging"
)

func TestStepsDesc(t *testing.T) {
	steps := []imaging.StepTiming{
		{Name: "read", Duration: 8100 * time.Microsecond},
		{Name: "crop", Duration: 20 * time.Microsecond}, // under 0.1 ms: left out
		{Name: "resize", Duration: 60250 * time.Microsecond},
		{Name: "encode", Duration: 100 * time.Microsecond},
	}
	if got, want := stepsDesc("made", steps), "made: read 8.1ms, resize 60.2ms, encode 0.1ms"; got != want {
		t.Fatalf("stepsDesc = %q, want %q", got, want)
	}
	if got := stepsDesc("made", steps[1:2]); got != "made" {
		t.Fatalf("only tiny steps: %q", got)
	}
}
