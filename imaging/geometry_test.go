package imaging

import (
	"image"
	"math"
	"testing"
)

func TestPlan(t *testing.T) {
	tests := []struct {
		name       string
		o          Options
		srcW, srcH int
		resize     image.Point
		crop       image.Rectangle
		canvas     image.Point
		offset     image.Point
	}{
		{"no size", Options{Blur: 1}, 400, 300, image.Pt(400, 300), image.Rect(0, 0, 400, 300), image.Pt(400, 300), image.Point{}},
		{"width", Options{Width: 200}, 400, 300, image.Pt(200, 150), image.Rect(0, 0, 200, 150), image.Pt(200, 150), image.Point{}},
		{"height rounds", Options{Height: 100}, 4000, 2990, image.Pt(134, 100), image.Rect(0, 0, 134, 100), image.Pt(134, 100), image.Point{}},
		{"enlarge", Options{Width: 800}, 40, 30, image.Pt(800, 600), image.Rect(0, 0, 800, 600), image.Pt(800, 600), image.Point{}},
		{"thin never zero", Options{Width: 10}, 10000, 1, image.Pt(10, 1), image.Rect(0, 0, 10, 1), image.Pt(10, 1), image.Point{}},
		{"inside wide", Options{Width: 100, Height: 100, Fit: FitInside}, 400, 200, image.Pt(100, 50), image.Rect(0, 0, 100, 50), image.Pt(100, 50), image.Point{}},
		{"inside tall", Options{Width: 100, Height: 100, Fit: FitInside}, 200, 400, image.Pt(50, 100), image.Rect(0, 0, 50, 100), image.Pt(50, 100), image.Point{}},
		{"outside wide", Options{Width: 100, Height: 100, Fit: FitOutside}, 400, 200, image.Pt(200, 100), image.Rect(0, 0, 200, 100), image.Pt(200, 100), image.Point{}},
		{"fill", Options{Width: 100, Height: 30, Fit: FitFill}, 400, 200, image.Pt(100, 30), image.Rect(0, 0, 100, 30), image.Pt(100, 30), image.Point{}},
		{"contain", Options{Width: 100, Height: 100, Fit: FitContain}, 400, 200, image.Pt(100, 50), image.Rect(0, 0, 100, 50), image.Pt(100, 100), image.Pt(0, 25)},
		{"cover center", Options{Width: 100, Height: 100, Fit: FitCover, Gravity: GravityCenter}, 400, 200, image.Pt(200, 100), image.Rect(50, 0, 150, 100), image.Pt(100, 100), image.Point{}},
		{"cover east", Options{Width: 100, Height: 100, Fit: FitCover, Gravity: GravityEast}, 400, 200, image.Pt(200, 100), image.Rect(100, 0, 200, 100), image.Pt(100, 100), image.Point{}},
		{"cover west", Options{Width: 100, Height: 100, Fit: FitCover, Gravity: GravityWest}, 400, 200, image.Pt(200, 100), image.Rect(0, 0, 100, 100), image.Pt(100, 100), image.Point{}},
		{"cover south", Options{Width: 100, Height: 100, Fit: FitCover, Gravity: GravitySouth}, 200, 400, image.Pt(100, 200), image.Rect(0, 100, 100, 200), image.Pt(100, 100), image.Point{}},
		{"cover northwest", Options{Width: 100, Height: 100, Fit: FitCover, Gravity: GravityNorthWest}, 200, 400, image.Pt(100, 200), image.Rect(0, 0, 100, 100), image.Pt(100, 100), image.Point{}},
		{"cover southeast", Options{Width: 50, Height: 100, Fit: FitCover, Gravity: GravitySouthEast}, 400, 400, image.Pt(100, 100), image.Rect(50, 0, 100, 100), image.Pt(50, 100), image.Point{}},
		// With r, w, h, fit and gravity refer to the rotated image: a quarter turn swaps the source's sides.
		{"90 width", Options{Width: 150, Rotate: 90}, 400, 300, image.Pt(150, 200), image.Rect(0, 0, 150, 200), image.Pt(150, 200), image.Point{}},
		{"270 no size", Options{Rotate: 270}, 400, 300, image.Pt(300, 400), image.Rect(0, 0, 300, 400), image.Pt(300, 400), image.Point{}},
		{"180 keeps sides", Options{Width: 200, Rotate: 180}, 400, 300, image.Pt(200, 150), image.Rect(0, 0, 200, 150), image.Pt(200, 150), image.Point{}},
		{"90 cover north", Options{Width: 100, Height: 100, Fit: FitCover, Gravity: GravityNorth, Rotate: 90}, 400, 200, image.Pt(100, 200), image.Rect(0, 0, 100, 100), image.Pt(100, 100), image.Point{}},
		{"270 cover center", Options{Width: 100, Height: 100, Fit: FitCover, Gravity: GravityCenter, Rotate: 270}, 400, 200, image.Pt(100, 200), image.Rect(0, 50, 100, 150), image.Pt(100, 100), image.Point{}},
		{"90 contain", Options{Width: 100, Height: 100, Fit: FitContain, Rotate: 90}, 400, 200, image.Pt(50, 100), image.Rect(0, 0, 50, 100), image.Pt(100, 100), image.Pt(25, 0)},
		{"90 inside", Options{Width: 100, Height: 100, Fit: FitInside, Rotate: 90}, 400, 200, image.Pt(50, 100), image.Rect(0, 0, 50, 100), image.Pt(50, 100), image.Point{}},
		{"90 fill", Options{Width: 100, Height: 30, Fit: FitFill, Rotate: 90}, 400, 200, image.Pt(100, 30), image.Rect(0, 0, 100, 30), image.Pt(100, 30), image.Point{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := tt.o.Plan(tt.srcW, tt.srcH)
			want := Plan{Resize: tt.resize, Rotate: tt.o.Rotate, Crop: tt.crop, Canvas: tt.canvas, Offset: tt.offset}
			if p != want {
				t.Errorf("Plan = %+v, want %+v", p, want)
			}
		})
	}
}

// TestPlanInvariants checks every fit on many source shapes: sizes are exact where
// promised, the crop lies inside the resized image and the aspect ratio is kept.
func TestPlanInvariants(t *testing.T) {
	sizes := []int{1, 2, 3, 7, 100, 333, 1000, 4001, 65000}
	for _, fit := range []Fit{FitInside, FitOutside, FitCover, FitContain, FitFill} {
		for _, sw := range sizes {
			for _, sh := range sizes {
				for _, wh := range [][2]int{{1, 1}, {100, 37}, {8192, 3}, {640, 480}} {
					o := Options{Width: wh[0], Height: wh[1], Fit: fit}.Normalize()
					checkPlan(t, o, sw, sh, o.Plan(sw, sh))
				}
			}
		}
	}
}

func checkPlan(t *testing.T, o Options, sw, sh int, p Plan) {
	t.Helper()
	w, h, r := o.Width, o.Height, p.Resize
	bad := !p.Crop.In(image.Rect(0, 0, r.X, r.Y)) || r.X < 1 || r.Y < 1
	switch o.Fit {
	case FitInside:
		bad = bad || r.X > w || r.Y > h || (r.X != w && r.Y != h)
	case FitOutside:
		bad = bad || r.X < w || r.Y < h || (r.X != w && r.Y != h)
	case FitCover, FitContain, FitFill:
		bad = bad || p.Canvas != image.Pt(w, h)
	}
	if o.Fit == FitCover {
		bad = bad || p.Crop.Size() != p.Canvas
	}
	if o.Fit != FitFill {
		// One side is exact; the other is the rounded aspect-ratio size (at least 1).
		bad = bad || !near(r.Y, float64(sh)*float64(r.X)/float64(sw)) && !near(r.X, float64(sw)*float64(r.Y)/float64(sh))
	}
	if bad {
		t.Errorf("Plan(%+v, %dx%d) = %+v", o, sw, sh, p)
	}
}

// near reports whether n is x rounded, or 1 for x below 1.
func near(n int, x float64) bool {
	return math.Abs(float64(n)-x) <= 0.5000001 || n == 1 && x < 1
}

// TestPlanTurn: Turn swaps the sides of a size for a quarter turn only.
func TestPlanTurn(t *testing.T) {
	for rot, want := range map[int]image.Point{0: image.Pt(200, 150), 90: image.Pt(150, 200), 180: image.Pt(200, 150), 270: image.Pt(150, 200)} {
		if got := (Plan{Rotate: rot}).Turn(image.Pt(200, 150)); got != want {
			t.Errorf("Turn by %d = %v, want %v", rot, got, want)
		}
	}
}

// TestPlanRotateSwapsSource checks on many shapes and every fit that a plan with a
// quarter turn is the plan of the source with its sides swapped, and that a half turn
// changes no size.
func TestPlanRotateSwapsSource(t *testing.T) {
	sizes := []int{1, 3, 100, 333, 4001}
	for _, fit := range []Fit{FitInside, FitOutside, FitCover, FitContain, FitFill} {
		for _, sw := range sizes {
			for _, sh := range sizes {
				for _, wh := range [][2]int{{100, 37}, {640, 480}, {0, 50}, {50, 0}} {
					for _, rot := range []int{90, 180, 270} {
						o := Options{Width: wh[0], Height: wh[1], Fit: fit, Rotate: rot}.Normalize()
						p := o.Plan(sw, sh)
						sw2, sh2 := sw, sh
						if rot != 180 {
							sw2, sh2 = sh, sw
						}
						o.Rotate = 0
						want := o.Plan(sw2, sh2)
						want.Rotate = rot
						if p != want {
							t.Errorf("Plan(%+v, %dx%d) with r=%d = %+v, want %+v", o, sw, sh, rot, p, want)
						}
						checkPlan(t, o, sw2, sh2, p)
					}
				}
			}
		}
	}
}
