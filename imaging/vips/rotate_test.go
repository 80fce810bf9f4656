//go:build !novips

package vips

import (
	"image"
	"testing"

	"github.com/coffer/coffer/imaging"
	govips "github.com/davidbyttow/govips/v2/vips"
)

// redCorner returns a 300×200 gradient with a 40×40 red block at its top-left.
func redCorner() *image.NRGBA {
	img := gradient(300, 200, false, 3)
	for y := range 40 {
		for x := range 40 {
			copy(img.Pix[img.PixOffset(x, y):], []uint8{255, 0, 0, 255})
		}
	}
	return img
}

// isRed reports whether the pixel at (x, y) is the red block's colour.
func isRed(img image.Image, x, y int) bool {
	r, g, b, _ := img.At(x, y).RGBA()
	return r>>8 > 200 && g>>8 < 60 && b>>8 < 60
}

// TestRotate turns a non-square source with a red top-left corner and finds the
// output's size swapped for quarter turns and the red block in the corner the turn
// takes it to; with EXIF orientation 6 (already a quarter turn clockwise) r=90 adds a
// second one, and w, h and crop refer to the rotated image.
func TestRotate(t *testing.T) {
	img := redCorner()
	png, jpg := encodePNG(img), encodeJPEG(img, 95)
	exif6 := withOrientation(jpg, 6)
	tests := []struct {
		name, query string
		src         []byte
		w, h        int
		corner      image.Point // the corner the red block must be in: 0 left/top, 1 right/bottom
	}{
		{"none", "f=png", png, 300, 200, image.Pt(0, 0)},
		{"90", "r=90&f=png", png, 200, 300, image.Pt(1, 0)},
		{"180", "r=180&f=png", png, 300, 200, image.Pt(1, 1)},
		{"270", "r=270&f=png", png, 200, 300, image.Pt(0, 1)},
		{"90 jpeg", "r=90", jpg, 200, 300, image.Pt(1, 0)},
		{"90 then width", "r=90&w=100&f=png", png, 100, 150, image.Pt(1, 0)},
		{"90 then height", "r=270&h=150&f=png", png, 100, 150, image.Pt(0, 1)},
		{"90 cover north", "r=90&w=100&h=100&crop=north&f=png", png, 100, 100, image.Pt(1, 0)},
		{"90 cover east", "r=90&w=150&h=100&crop=northeast&f=png", png, 150, 100, image.Pt(1, 0)},
		{"90 contain", "r=90&w=300&h=300&fit=contain&f=png", png, 300, 300, image.Pt(1, 0)},
		{"90 fill", "r=90&w=50&h=50&fit=fill&f=png", png, 50, 50, image.Pt(1, 0)},
		{"exif 6 then 90", "r=90&f=png", exif6, 300, 200, image.Pt(1, 1)},
		{"exif 6 then 270", "r=270&f=png", exif6, 300, 200, image.Pt(0, 0)},
	}
	e := newEngine(t, imaging.DefaultConfig())
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := transform(t, e, tt.src, parse(t, tt.query))
			if err != nil {
				t.Fatal(err)
			}
			d := decode(t, res.Data)
			if d.w != tt.w || d.h != tt.h || res.Width != tt.w || res.Height != tt.h {
				t.Fatalf("output %dx%d (Result %dx%d), want %dx%d", d.w, d.h, res.Width, res.Height, tt.w, tt.h)
			}
			checkRedCorner(t, d.img, tt.corner)
		})
	}
}

// checkRedCorner checks that of the image's four corners only want is red. For
// contain, the corners may be padding: it looks at the content's corners instead.
func checkRedCorner(t *testing.T, img image.Image, want image.Point) {
	t.Helper()
	b := img.Bounds()
	for _, c := range []image.Point{{0, 0}, {1, 0}, {0, 1}, {1, 1}} {
		x, y := b.Min.X+3+c.X*(b.Dx()-7), b.Min.Y+3+c.Y*(b.Dy()-7)
		if b.Dx() == b.Dy() && b.Dx() == 300 { // contain: 200×300 content centred in 300×300
			x = 53 + c.X*(200-7)
		}
		if got := isRed(img, x, y); got != (c == want) {
			t.Errorf("corner %v at (%d, %d): red %v, want %v", c, x, y, got, c == want)
		}
	}
}

// TestRotateSmartCrop checks that attention and entropy crops of a rotated image
// have the requested (rotated) size.
func TestRotateSmartCrop(t *testing.T) {
	src := encodeJPEG(redCorner(), 90)
	e := newEngine(t, imaging.DefaultConfig())
	for _, q := range []string{"r=90&w=100&h=50&crop=attention", "r=270&w=40&h=120&crop=entropy", "r=180&w=60&h=60&crop=smart"} {
		res, err := transform(t, e, src, parse(t, q))
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		o := parse(t, q)
		if d := decode(t, res.Data); d.w != o.Width || d.h != o.Height {
			t.Errorf("%s: output %dx%d", q, d.w, d.h)
		}
	}
}

// toMemory renders a sequentially loaded thumbnail so that a quarter turn can read
// it (without it, libvips fails with "out of order read" on a source taller than
// its line cache), and a killed image stops it with an error.
func TestToMemory(t *testing.T) {
	if _, err := start(); err != nil {
		t.Fatal(err)
	}
	src := encodeJPEG(gradient(2000, 1500, false, 5), 85)
	load := func() *govips.ImageRef {
		ref, err := govips.LoadThumbnailFromBuffer(src, 2000, 1500, govips.InterestingNone, govips.SizeForce, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(ref.Close)
		return ref
	}
	ref := load()
	if err := toMemory(ref); err != nil {
		t.Fatal(err)
	}
	if err := ref.Rotate(govips.Angle90); err != nil {
		t.Fatal(err)
	}
	if _, meta, err := ref.ExportPng(nil); err != nil || meta.Width != 1500 || meta.Height != 2000 {
		t.Fatalf("export of the turned image: %v %+v", err, meta)
	}
	killed := load()
	var k killer
	k.track(killed)
	defer k.release()
	k.kill()
	if err := toMemory(killed); err == nil {
		t.Fatal("toMemory of a killed image succeeded")
	}
}

// TestRotateLargeSource turns sources too tall for libvips' sequential line cache,
// which only works because the pipeline renders the scaled image first.
func TestRotateLargeSource(t *testing.T) {
	src := encodeJPEG(gradient(2000, 1500, false, 5), 85)
	e := newEngine(t, imaging.DefaultConfig())
	for _, q := range []string{"r=90", "r=180&w=1000", "r=270&h=1000&b=1"} {
		res, err := transform(t, e, src, parse(t, q))
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		want := parse(t, q).Plan(2000, 1500).Canvas
		if d := decode(t, res.Data); d.w != want.X || d.h != want.Y {
			t.Errorf("%s: output %dx%d, want %v", q, d.w, d.h, want)
		}
	}
}
