//go:build !novips

package vips

import (
	"fmt"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/coffer/coffer/imaging"
	"github.com/coffer/coffer/imaging/imagingtest"
)

// TestCalibrateCost prints the CPU time and the cost estimate of a table of
// transformations, to calibrate imaging.Cost (COFFER_CALIBRATE=1; not a check).
func TestCalibrateCost(t *testing.T) {
	if os.Getenv("COFFER_CALIBRATE") == "" {
		t.Skip("set COFFER_CALIBRATE=1 to measure")
	}
	cfg := imaging.DefaultConfig()
	cfg.Workers, cfg.MaxCost, cfg.Timeout, cfg.UserWorkers = 1, 1<<62, time.Hour, 1
	e := newEngine(t, cfg)
	for _, c := range calibrationCases() {
		src := c.src()
		h, err := readHeader(src, sniff(t, src))
		if err != nil {
			t.Fatal(err)
		}
		before, start := cpuTime(t, syscall.RUSAGE_SELF), time.Now()
		_, err = transform(t, e, src, c.opts)
		cpu, wall := cpuTime(t, syscall.RUSAGE_SELF)-before, time.Since(start)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
		o := c.opts.Normalize()
		plan := o.Plan(h.Oriented())
		est := imaging.Cost(h, plan, o.Blur)
		fmt.Printf("%-34s cpu %8.0f ms  wall %8.0f ms  cost %12d  ns/unit %.2f\n", c.name, float64(cpu.Microseconds())/1000,
			float64(wall.Microseconds())/1000, est, float64(cpu.Nanoseconds())/float64(max(est, 1)))
	}
}

// calibrationCase is one transformation to time.
type calibrationCase struct {
	name string
	src  func() []byte
	opts imaging.Options
}

func calibrationCases() []calibrationCase {
	jpg := func(w, h int) func() []byte { return func() []byte { return encodeJPEG(gradient(w, h, false, 1), 85) } }
	gif := func(w, h, n int) func() []byte { return func() []byte { return imagingtest.AnimatedGIF(w, h, n) } }
	png := func(w, h int) func() []byte { return func() []byte { return encodePNG(gradient(w, h, false, 2)) } }
	return []calibrationCase{
		{"jpeg 1000x750 -> 200", jpg(1000, 750), imaging.Options{Width: 200}},
		{"jpeg 4000x3000 -> 800 b2", jpg(4000, 3000), imaging.Options{Width: 800, Blur: 2}},
		{"jpeg 4000x3000 -> 800", jpg(4000, 3000), imaging.Options{Width: 800}},
		{"jpeg 4000x3000 -> 3000", jpg(4000, 3000), imaging.Options{Width: 3000}},
		{"jpeg 4000x3000 -> 800 r90", jpg(4000, 3000), imaging.Options{Height: 800, Rotate: 90}},
		{"jpeg 4000x3000 -> 3000 r90", jpg(4000, 3000), imaging.Options{Height: 3000, Rotate: 90}},
		{"jpeg 4000x3000 -> 3000 r180", jpg(4000, 3000), imaging.Options{Width: 3000, Rotate: 180}},
		{"png 2000x2000 -> 500", png(2000, 2000), imaging.Options{Width: 500}},
		{"jpeg 7000x7000 -> 1000", jpg(7000, 7000), imaging.Options{Width: 1000}},
		{"jpeg 7000x7000 -> 1000 b10", jpg(7000, 7000), imaging.Options{Width: 1000, Blur: 10}},
		{"jpeg 7000x7000 -> 2000", jpg(7000, 7000), imaging.Options{Width: 2000}},
		{"jpeg 7000x7000 -> 2000 b20", jpg(7000, 7000), imaging.Options{Width: 2000, Blur: 20}},
		{"jpeg 7000x7000 -> 4000", jpg(7000, 7000), imaging.Options{Width: 4000}},
		{"jpeg 7000x7000 -> 4000 r90", jpg(7000, 7000), imaging.Options{Width: 4000, Rotate: 90}},
		{"jpeg 7000x7000 -> 4000 fill b50", jpg(7000, 7000), imaging.Options{Width: 4000, Height: 4000, Fit: imaging.FitFill, Blur: 50}},
		{"gif 1000x1000x99 -> 200", gif(1000, 1000, 99), imaging.Options{Width: 200}},
		{"gif 5000x5000x99 -> 200", gif(5000, 5000, 99), imaging.Options{Width: 200}},
	}
}

func sniff(t testing.TB, src []byte) imaging.Format {
	f, ok := imaging.Sniff(src)
	if !ok {
		t.Fatal("not an image")
	}
	return f
}
