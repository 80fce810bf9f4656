package imaging

import (
	"strings"
	"testing"

	"github.com/coffer/coffer"
)

// Ordinary thumbnails are within DefaultMaxCost; the expensive
// transformations are not, and are refused with EINVALID naming the flag.
func TestCostBudgetTable(t *testing.T) {
	cfg := DefaultConfig()
	tests := []struct {
		name string
		h    Header
		o    Options
		ok   bool
	}{
		{"jpeg 4000x3000 to 800 px blur 2", Header{Format: JPEG, Width: 4000, Height: 3000, Frames: 1}, Options{Width: 800, Blur: 2}, true},
		{"jpeg 7000x7000 to 1000 px", Header{Format: JPEG, Width: 7000, Height: 7000, Frames: 1}, Options{Width: 1000}, true},
		{"jpeg 7000x7000 to 4000 px", Header{Format: JPEG, Width: 7000, Height: 7000, Frames: 1}, Options{Width: 4000}, true},
		{"png 2000x2000 to 500 px", Header{Format: PNG, Width: 2000, Height: 2000, Frames: 1}, Options{Width: 500}, true},
		{"gif 1000x1000, 99 frames, to 200 px", Header{Format: GIF, Width: 1000, Height: 1000, Frames: 99}, Options{Width: 200}, true},
		{"jpeg 7000x7000 fill 4000x4000 blur 50", Header{Format: JPEG, Width: 7000, Height: 7000, Frames: 1}, Options{Width: 4000, Height: 4000, Fit: FitFill, Blur: 50}, false},
		{"jpeg 7000x7000 fill 5000x5000 blur 90", Header{Format: JPEG, Width: 7000, Height: 7000, Frames: 1}, Options{Width: 5000, Height: 5000, Fit: FitFill, Blur: 90}, false},
		{"gif 5000x5000, 99 frames, to 200 px", Header{Format: GIF, Width: 5000, Height: 5000, Frames: 99}, Options{Width: 200}, false},
		{"jpeg 2000x2000 blur 100", Header{Format: JPEG, Width: 2000, Height: 2000, Frames: 1}, Options{Width: 2000, Blur: 100}, false},
	}
	for _, tt := range tests {
		o := tt.o.Normalize()
		p := o.Plan(tt.h.Oriented())
		err := cfg.CheckCost(tt.h, p, o.Blur)
		t.Logf("%-40s cost %.2fe9", tt.name, float64(Cost(tt.h, p, o.Blur))/1e9)
		if tt.ok && err != nil {
			t.Errorf("%s: refused: %v", tt.name, err)
		}
		if !tt.ok && (coffer.ErrorCode(err) != coffer.EINVALID || !strings.Contains(coffer.ErrorMessage(err), "--image-max-cost")) {
			t.Errorf("%s: err = %v, want EINVALID naming --image-max-cost", tt.name, err)
		}
	}
}

// Cost grows with each of its inputs.
func TestCostMonotonic(t *testing.T) {
	h := Header{Format: JPEG, Width: 3000, Height: 2000, Frames: 1}
	base := Cost(h, Options{Width: 600}.Plan(3000, 2000), 0)
	bigger := []int64{
		Cost(h, Options{Width: 600}.Plan(3000, 2000), 1),
		Cost(h, Options{Width: 1200}.Plan(3000, 2000), 0),
		Cost(Header{Format: JPEG, Width: 6000, Height: 4000, Frames: 1}, Options{Width: 600}.Plan(6000, 4000), 0),
		Cost(Header{Format: JPEG, Width: 3000, Height: 2000, Frames: 5}, Options{Width: 600}.Plan(3000, 2000), 0),
		Cost(Header{Format: PNG, Width: 3000, Height: 2000, Frames: 1}, Options{Width: 600}.Plan(3000, 2000), 0),
	}
	for i, c := range bigger {
		if c <= base {
			t.Errorf("case %d: cost %d not above the base %d", i, c, base)
		}
	}
}

// A quarter turn changes which side of the source a JPEG's shrink-on-load compares
// with: turning a 4000×1000 source and asking for 250 px wide is the work of asking
// for 1000 px wide without the turn (a 4× shrink-on-load), not of a full decode.
func TestCostOfRotation(t *testing.T) {
	h := Header{Format: JPEG, Width: 4000, Height: 1000, Frames: 1}
	turned := Cost(h, Options{Width: 250, Rotate: 90}.Plan(h.Oriented()), 0)
	plain := Cost(h, Options{Width: 1000}.Plan(h.Oriented()), 0)
	if turned != plain {
		t.Errorf("cost of r=90 w=250: %d, want %d as for w=1000", turned, plain)
	}
	if half := Cost(h, Options{Width: 1000, Rotate: 180}.Plan(h.Oriented()), 0); half != plain {
		t.Errorf("cost of r=180 w=1000: %d, want %d", half, plain)
	}
}
