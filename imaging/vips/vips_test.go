//go:build !novips

package vips

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/draw"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/imaging"
	"github.com/coffer/coffer/imaging/imagingtest"
	govips "github.com/davidbyttow/govips/v2/vips"
)

// sources are the test inputs.
type sources struct {
	jpg, png, gif, webp, avif, heic []byte
	gray, png16, cmyk               []byte
}

// testSources returns the test inputs, made once per test binary.
func testSources(t testing.TB) *sources {
	t.Helper()
	s, err := makeSources()
	if err != nil {
		t.Fatalf("making test sources: %v", err)
	}
	return s
}

var makeSources = sync.OnceValues(func() (*sources, error) {
	s := &sources{
		jpg: encodeJPEG(gradient(400, 300, false, 1), 90),
		png: encodePNG(gradient(400, 300, true, 2)),
		gif: imagingtest.AnimatedGIF(40, 30, 5),
	}
	gray := image.NewGray(image.Rect(0, 0, 400, 300))
	deep := image.NewNRGBA64(image.Rect(0, 0, 400, 300))
	draw.Draw(gray, gray.Bounds(), gradient(400, 300, false, 5), image.Point{}, draw.Src)
	draw.Draw(deep, deep.Bounds(), gradient(400, 300, true, 6), image.Point{}, draw.Src)
	s.gray, s.png16 = encodeJPEG(gray, 90), encodePNG(deep)
	e, err := New(imaging.DefaultConfig())
	if err != nil {
		return nil, err
	}
	defer e.Close()
	for _, c := range []struct {
		dst *[]byte
		f   imaging.Format
	}{{&s.webp, imaging.WebP}, {&s.avif, imaging.AVIF}} {
		res, err := e.Transform(context.Background(), bytes.NewReader(s.jpg), imaging.Options{Format: c.f})
		if err != nil {
			return nil, err
		}
		*c.dst = res.Data
	}
	if s.heic, err = heic(s.jpg); err != nil {
		return nil, err
	}
	s.cmyk, err = cmyk(s.jpg)
	return s, err
})

// cmyk converts a JPEG to a CMYK JPEG, as print workflows make them.
func cmyk(jpg []byte) ([]byte, error) {
	img, err := govips.NewImageFromBuffer(jpg)
	if err != nil {
		return nil, err
	}
	defer img.Close()
	if err := img.ToColorSpace(govips.InterpretationCMYK); err != nil {
		return nil, err
	}
	out, _, err := img.ExportJpeg(govips.NewJpegExportParams())
	return out, err
}

// heic encodes a JPEG as HEIC (HEVC) with libvips, as a phone would.
func heic(jpg []byte) ([]byte, error) {
	img, err := govips.NewImageFromBuffer(jpg)
	if err != nil {
		return nil, err
	}
	defer img.Close()
	out, _, err := img.ExportHeif(govips.NewHeifExportParams())
	return out, err
}

func parse(t *testing.T, q string) imaging.Options {
	t.Helper()
	v, err := url.ParseQuery(q)
	if err != nil {
		t.Fatal(err)
	}
	o, err := imaging.Parse(v)
	if err != nil {
		t.Fatalf("Parse(%q): %v", q, err)
	}
	return o
}

func TestTransform(t *testing.T) {
	src := testSources(t)
	e := newEngine(t, imaging.DefaultConfig())
	tests := []struct {
		name, query string
		src         []byte
		format      imaging.Format
		w, h        int
	}{
		{"jpeg width", "w=200", src.jpg, imaging.JPEG, 200, 150},
		{"jpeg height to png", "h=100&f=png", src.jpg, imaging.PNG, 133, 100},
		{"default: centre crop", "w=100&h=100", src.jpg, imaging.JPEG, 100, 100},
		{"inside", "w=100&h=100&fit=inside", src.jpg, imaging.JPEG, 100, 75},
		{"contain", "w=100&h=100&fit=contain", src.jpg, imaging.JPEG, 100, 100},
		{"cover", "w=100&h=100&fit=cover", src.jpg, imaging.JPEG, 100, 100},
		{"cover north", "w=100&h=40&crop=north", src.jpg, imaging.JPEG, 100, 40},
		{"fill", "w=100&h=100&fit=fill", src.jpg, imaging.JPEG, 100, 100},
		{"outside", "w=100&h=100&fit=outside", src.jpg, imaging.JPEG, 133, 100},
		{"attention", "w=100&h=50&crop=attention", src.jpg, imaging.JPEG, 100, 50},
		{"entropy webp", "w=100&h=50&crop=entropy&f=webp", src.jpg, imaging.WebP, 100, 50},
		{"enlarge", "w=800", src.jpg, imaging.JPEG, 800, 600},
		{"blur only", "b=2", src.jpg, imaging.JPEG, 400, 300},
		{"tiny blur", "b=0.01&w=10", src.jpg, imaging.JPEG, 10, 8},
		{"large blur", "b=100&w=50", src.jpg, imaging.JPEG, 50, 38},
		{"webp quality", "f=webp&q=50", src.jpg, imaging.WebP, 400, 300},
		{"avif", "f=avif&w=64", src.jpg, imaging.AVIF, 64, 48},
		{"one pixel", "w=1&h=1&fit=cover", src.jpg, imaging.JPEG, 1, 1},
		{"auto unresolved is source", "f=auto&w=10", src.jpg, imaging.JPEG, 10, 8},
		{"no options re-encodes", "", src.jpg, imaging.JPEG, 400, 300},
		{"png alpha", "w=200", src.png, imaging.PNG, 200, 150},
		{"png alpha to jpeg", "w=200&f=jpeg", src.png, imaging.JPEG, 200, 150},
		{"png alpha contain", "w=100&h=100&fit=contain&b=1", src.png, imaging.PNG, 100, 100},
		{"png alpha blur webp", "b=3&f=webp", src.png, imaging.WebP, 400, 300},
		{"gif keeps as png", "w=20", src.gif, imaging.PNG, 20, 15},
		{"gif to webp", "w=20&h=20&fit=cover&f=webp", src.gif, imaging.WebP, 20, 20},
		{"webp source", "w=100", src.webp, imaging.WebP, 100, 75},
		{"avif source to jpeg", "w=100&f=jpeg", src.avif, imaging.JPEG, 100, 75},
		{"avif source kept", "w=100", src.avif, imaging.AVIF, 100, 75},
		{"heic source is jpeg", "w=100", src.heic, imaging.JPEG, 100, 75},
		{"heic source to webp", "h=30&f=webp", src.heic, imaging.WebP, 40, 30},
		{"gray jpeg contain", "w=100&h=100&fit=contain&b=1", src.gray, imaging.JPEG, 100, 100},
		{"gray jpeg to webp", "w=100&f=webp", src.gray, imaging.WebP, 100, 75},
		{"16-bit png", "w=100&h=100&fit=contain", src.png16, imaging.PNG, 100, 100},
		{"16-bit png to jpeg", "w=100&b=2&f=jpeg", src.png16, imaging.JPEG, 100, 75},
		{"cmyk jpeg to webp", "w=100&f=webp", src.cmyk, imaging.WebP, 100, 75},
		{"cmyk jpeg kept", "w=100", src.cmyk, imaging.JPEG, 100, 75},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := transform(t, e, tt.src, parse(t, tt.query))
			if err != nil {
				t.Fatalf("Transform: %v", err)
			}
			d := decode(t, res.Data)
			if d.format != tt.format || d.w != tt.w || d.h != tt.h {
				t.Errorf("output %s %dx%d, want %s %dx%d", d.format, d.w, d.h, tt.format, tt.w, tt.h)
			}
			if res.Format != d.format || res.Width != d.w || res.Height != d.h || res.MIME() != "image/"+string(d.format) {
				t.Errorf("Result says %s %dx%d %s", res.Format, res.Width, res.Height, res.MIME())
			}
			if len(res.Steps) != 6 || res.Steps[5].Name != "encode" {
				t.Errorf("Steps = %v", res.Steps)
			}
		})
	}
}

// pixelAt returns the 8-bit red and alpha of a pixel.
func pixelAt(img image.Image, x, y int) (r, a uint32) {
	r, _, _, a = img.At(x, y).RGBA()
	return r >> 8, a >> 8
}

func TestPaddingAndAlpha(t *testing.T) {
	src := testSources(t)
	e := newEngine(t, imaging.DefaultConfig())
	tests := []struct {
		name, query string
		src         []byte
		x, y        int
		red, alpha  uint32 // want, with a tolerance of 8
	}{
		{"opaque source pads white", "w=100&h=100&fit=contain&f=png", src.jpg, 50, 2, 255, 255},
		{"alpha source pads transparent", "w=100&h=100&fit=contain", src.png, 50, 2, 0, 0},
		{"alpha kept in png", "w=200", src.png, 2, 75, 0, 0},
		{"alpha flattened on white in jpeg", "w=200&f=jpeg", src.png, 1, 75, 255, 255},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := transform(t, e, tt.src, parse(t, tt.query))
			if err != nil {
				t.Fatal(err)
			}
			r, a := pixelAt(decode(t, res.Data).img, tt.x, tt.y)
			if a+8 < tt.alpha || a > tt.alpha+8 || (tt.alpha > 0 && (r+8 < tt.red || r > tt.red+8)) {
				t.Errorf("pixel (%d,%d): red %d alpha %d, want red %d alpha %d", tt.x, tt.y, r, a, tt.red, tt.alpha)
			}
		})
	}
}

// meanRed returns the mean red value of an image.
func meanRed(img image.Image) float64 {
	b, sum := img.Bounds(), 0.0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, _, _, _ := img.At(x, y).RGBA()
			sum += float64(r >> 8)
		}
	}
	return sum / float64(b.Dx()*b.Dy())
}

// TestGravity checks that cover crops keep the named side: red grows to the east.
func TestGravity(t *testing.T) {
	e := newEngine(t, imaging.DefaultConfig())
	red := map[string]float64{}
	for _, g := range []string{"west", "center", "east"} {
		res, err := transform(t, e, testSources(t).jpg, parse(t, "w=50&h=100&crop="+g))
		if err != nil {
			t.Fatal(err)
		}
		red[g] = meanRed(decode(t, res.Data).img)
	}
	if !(red["west"]+40 < red["center"] && red["center"]+40 < red["east"]) {
		t.Errorf("mean red west %.0f, center %.0f, east %.0f: want clearly increasing", red["west"], red["center"], red["east"])
	}
}

func TestOrientation(t *testing.T) {
	// 300×200 with a red top-left block; orientation 6 means "rotate 90° clockwise to
	// display", which moves the block to the top-right of a 200×300 image.
	img := gradient(300, 200, false, 3)
	for y := range 40 {
		for x := range 40 {
			img.Pix[img.PixOffset(x, y)], img.Pix[img.PixOffset(x, y)+1], img.Pix[img.PixOffset(x, y)+2] = 255, 0, 0
		}
	}
	src := withOrientation(encodeJPEG(img, 95), 6)
	e := newEngine(t, imaging.DefaultConfig())
	for _, q := range []string{"f=png", "w=100&f=png", "w=100&h=100&fit=cover&crop=north&f=png"} {
		res, err := transform(t, e, src, parse(t, q))
		if err != nil {
			t.Fatal(err)
		}
		d := decode(t, res.Data)
		w, h := d.w, d.h
		if q == "f=png" && (w != 200 || h != 300) || q == "w=100&f=png" && (w != 100 || h != 150) {
			t.Errorf("%s: output %dx%d, want rotated", q, w, h)
		}
		rTopRight, _, _, _ := d.img.At(w-3, 2).RGBA()
		_, gTopRight, _, _ := d.img.At(w-3, 2).RGBA()
		rTopLeft, _, _, _ := d.img.At(2, 2).RGBA()
		if rTopRight>>8 < 200 || gTopRight>>8 > 60 || rTopLeft>>8 > 150 {
			t.Errorf("%s: top-right red %d green %d, top-left red %d: not rotated", q, rTopRight>>8, gTopRight>>8, rTopLeft>>8)
		}
		if bytes.Contains(res.Data, []byte("Exif")) {
			t.Errorf("%s: output keeps EXIF", q)
		}
	}
}

func TestBlurAndQualityChangeOutput(t *testing.T) {
	e := newEngine(t, imaging.DefaultConfig())
	out := map[string][]byte{}
	for _, q := range []string{"w=200", "w=200&b=2", "w=200&b=2.5", "w=200&q=30", "w=200&q=95", "w=200&f=webp", "w=200&f=webp&q=30"} {
		res, err := transform(t, e, testSources(t).jpg, parse(t, q))
		if err != nil {
			t.Fatal(err)
		}
		out[q] = res.Data
	}
	distinct := func(a, b string) {
		if bytes.Equal(out[a], out[b]) {
			t.Errorf("%q and %q give the same bytes", a, b)
		}
	}
	distinct("w=200", "w=200&b=2")
	distinct("w=200&b=2", "w=200&b=2.5")
	distinct("w=200&f=webp", "w=200&f=webp&q=30")
	if !(len(out["w=200&q=30"]) < len(out["w=200"]) && len(out["w=200"]) < len(out["w=200&q=95"])) {
		t.Errorf("JPEG sizes q30 %d, q80 %d, q95 %d: want increasing", len(out["w=200&q=30"]), len(out["w=200"]), len(out["w=200&q=95"]))
	}
	// Blur removes the noise: a blurred image has less pixel-to-pixel variation.
	if sharp, blurred := roughness(decode(t, out["w=200"]).img), roughness(decode(t, out["w=200&b=2"]).img); blurred > sharp/2 {
		t.Errorf("roughness %.1f unblurred, %.1f blurred: blur had little effect", sharp, blurred)
	}
}

// roughness is the mean absolute difference of horizontally adjacent green values.
func roughness(img image.Image) float64 {
	b, sum := img.Bounds(), 0.0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X + 1; x < b.Max.X; x++ {
			_, g1, _, _ := img.At(x-1, y).RGBA()
			_, g2, _, _ := img.At(x, y).RGBA()
			sum += float64(max(g1, g2)-min(g1, g2)) / 256
		}
	}
	return sum / float64(b.Dx()*b.Dy())
}

func TestRefusesWhatIsNotAnImage(t *testing.T) {
	e := newEngine(t, imaging.DefaultConfig())
	jpg := testSources(t).jpg
	tests := []struct {
		name string
		src  []byte
		code string
		msg  string
	}{
		{"text", []byte("hello, this is a text file\n"), coffer.EUNSUPPORTED, "file is not an image coffer can transform"},
		{"empty", nil, coffer.EUNSUPPORTED, "not an image"},
		{"svg", []byte(`<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>`), coffer.EUNSUPPORTED, "not an image"},
		{"pdf", []byte("%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF"), coffer.EUNSUPPORTED, "not an image"},
		{"ppm", []byte("P6\n2 2\n255\n" + strings.Repeat("\xff", 12)), coffer.EUNSUPPORTED, "not an image"},
		{"jpeg magic then garbage", append([]byte{0xFF, 0xD8, 0xFF, 0xE0}, bytes.Repeat([]byte("junk"), 100)...), coffer.EUNSUPPORTED, "damaged"},
		{"png signature only", []byte("\x89PNG\r\n\x1a\n"), coffer.EUNSUPPORTED, "not an image"},
		{"truncated jpeg header", jpg[:300], coffer.EUNSUPPORTED, "damaged"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := transform(t, e, tt.src, imaging.Options{Width: 10})
			if coffer.ErrorCode(err) != tt.code || !strings.Contains(coffer.ErrorMessage(err), tt.msg) {
				t.Errorf("Transform = %v, %v; want %s %q", res, err, tt.code, tt.msg)
			}
		})
	}
}

// TestTruncatedJPEG: a JPEG cut in the middle of its scan still decodes (libvips fills
// the rest, as browsers do) rather than failing.
func TestTruncatedJPEG(t *testing.T) {
	e := newEngine(t, imaging.DefaultConfig())
	jpg := testSources(t).jpg
	res, err := transform(t, e, jpg[:len(jpg)/2], imaging.Options{Width: 40})
	if err != nil {
		t.Fatalf("Transform of half a JPEG: %v", err)
	}
	if d := decode(t, res.Data); d.w != 40 {
		t.Errorf("width %d", d.w)
	}
}

func TestInvalidOptionsAndLimits(t *testing.T) {
	src := testSources(t)
	cfg := imaging.DefaultConfig()
	cfg.MaxSourceBytes = int64(len(src.jpg)) - 1
	cfg.MaxOutputPixels = 1000 * 1000
	e := newEngine(t, cfg)
	tests := []struct {
		name string
		src  []byte
		o    imaging.Options
		code string
	}{
		{"invalid options", src.png, imaging.Options{Width: -1}, coffer.EINVALID},
		{"gif output", src.png, imaging.Options{Format: imaging.GIF}, coffer.EINVALID},
		{"source too many bytes", src.jpg, imaging.Options{Width: 10}, coffer.ETOOLARGE},
		{"output too large", src.gif, imaging.Options{Width: 2000}, coffer.EINVALID},
		{"intermediate too large", src.gif, imaging.Options{Width: 4000, Height: 1, Fit: imaging.FitCover}, coffer.EINVALID},
		{"output at the limit", src.gif, imaging.Options{Width: 1000, Height: 1000, Fit: imaging.FitFill}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := transform(t, e, tt.src, tt.o)
			if coffer.ErrorCode(err) != tt.code {
				t.Errorf("Transform = %v, want %q", err, tt.code)
			}
		})
	}
}

// TestLoadersBlocked feeds libvips directly, bypassing the Go sniffing: blocked
// loaders refuse, allowed ones work.
func TestLoadersBlocked(t *testing.T) {
	newEngine(t, imaging.DefaultConfig())
	svg := []byte(`<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10"/></svg>`)
	ppm := []byte("P6\n2 2\n255\n" + strings.Repeat("\xff", 12))
	for name, src := range map[string][]byte{"svg": svg, "ppm": ppm} {
		if img, err := govips.LoadThumbnailFromBuffer(src, 5, 5, govips.InterestingNone, govips.SizeBoth, nil); err == nil {
			img.Close()
			t.Errorf("%s: libvips loaded a blocked format", name)
		}
	}
	img, err := govips.LoadThumbnailFromBuffer(testSources(t).png, 5, 5, govips.InterestingNone, govips.SizeBoth, nil)
	if err != nil {
		t.Fatalf("PNG refused: %v", err)
	}
	img.Close()
	// The SVG loader exists: unblocked, it loads the same bytes.
	setBlocked("VipsForeignLoadSvg", false)
	defer setBlocked("VipsForeignLoadSvg", true)
	img, err = govips.LoadThumbnailFromBuffer(svg, 5, 5, govips.InterestingNone, govips.SizeBoth, nil)
	if err != nil {
		t.Fatalf("unblocked SVG loader refused: %v", err)
	}
	img.Close()
}

// slowReader blocks its first Read until release is closed.
type slowReader struct {
	started chan struct{}
	release chan struct{}
	r       *bytes.Reader
}

func (s *slowReader) Read(p []byte) (int, error) {
	select {
	case s.started <- struct{}{}:
	default:
	}
	<-s.release
	return s.r.Read(p)
}

// TestEngineQueue: the source is read on the worker, so a slow source occupies it; a
// second transform with no queue is refused with ErrBusy, a queued one whose context
// ends leaves at once.
func TestEngineQueue(t *testing.T) {
	cfg := imaging.DefaultConfig()
	cfg.Workers, cfg.Queue = 1, 0
	e := newEngine(t, cfg)
	slow := &slowReader{started: make(chan struct{}, 1), release: make(chan struct{}), r: bytes.NewReader(testSources(t).jpg)}
	done := make(chan error)
	go func() {
		_, err := e.Transform(context.Background(), slow, imaging.Options{Width: 10})
		done <- err
	}()
	<-slow.started
	if e.Pool().Busy() != 1 {
		t.Errorf("Busy = %d", e.Pool().Busy())
	}
	_, err := transform(t, e, testSources(t).jpg, imaging.Options{Width: 10})
	if !errors.Is(err, imaging.ErrBusy) || coffer.ErrorCode(err) != coffer.EUNAVAILABLE {
		t.Errorf("second Transform = %v, want ErrBusy", err)
	}
	close(slow.release)
	if err := <-done; err != nil {
		t.Errorf("slow Transform = %v", err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := transform(t, e, testSources(t).jpg, imaging.Options{Width: 10}); !errors.Is(err, imaging.ErrClosed) {
		t.Errorf("Transform after Close = %v, want ErrClosed", err)
	}
}

func TestSupports(t *testing.T) {
	e := newEngine(t, imaging.DefaultConfig())
	for f, want := range map[imaging.Format]bool{
		imaging.JPEG: true, imaging.PNG: true, imaging.WebP: true, imaging.AVIF: true,
		imaging.GIF: false, imaging.HEIF: false, imaging.FormatAuto: false, imaging.FormatKeep: false,
	} {
		if got := e.Supports(f); got != want {
			t.Errorf("Supports(%q) = %v, want %v", f, got, want)
		}
	}
	if _, err := New(imaging.Config{}); coffer.ErrorCode(err) != coffer.EINVALID {
		t.Errorf("New(zero config) = %v, want EINVALID", err)
	}
}

// TestStripsMetadata: no output carries the source's EXIF.
func TestStripsMetadata(t *testing.T) {
	e := newEngine(t, imaging.DefaultConfig())
	src := withOrientation(testSources(t).jpg, 1)
	if !bytes.Contains(src, []byte(privateText)) {
		t.Fatal("source lacks the private text")
	}
	for _, f := range []imaging.Format{imaging.JPEG, imaging.PNG, imaging.WebP, imaging.AVIF} {
		for _, o := range []imaging.Options{{Format: f}, {Format: f, Width: 50, Blur: 1}} {
			res, err := transform(t, e, src, o)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range []string{privateText, "Exif", "EXIF"} {
				if bytes.Contains(res.Data, []byte(s)) {
					t.Errorf("%+v: output contains %q", o, s)
				}
			}
			decode(t, res.Data)
		}
	}
}

// TestConcurrentTransforms runs more transforms than workers at once: every one
// succeeds (the queue holds the rest) and gives the same bytes as when run alone.
func TestConcurrentTransforms(t *testing.T) {
	src := testSources(t)
	cfg := imaging.DefaultConfig()
	cfg.Workers, cfg.Queue = 2, 16
	e := newEngine(t, cfg)
	inputs := [][]byte{src.jpg, src.png, src.gif, src.webp}
	opts := []imaging.Options{{Width: 64, Blur: 1, Format: imaging.WebP}, {Width: 50, Height: 50, Fit: imaging.FitCover, Format: imaging.PNG}}
	want := map[[2]int][]byte{}
	for i, in := range inputs {
		for j, o := range opts {
			res, err := transform(t, e, in, o)
			if err != nil {
				t.Fatal(err)
			}
			want[[2]int{i, j}] = res.Data
		}
	}
	var wg sync.WaitGroup
	for range 2 {
		for k := range want {
			wg.Go(func() {
				res, err := transform(t, e, inputs[k[0]], opts[k[1]])
				if err != nil {
					t.Errorf("%v: %v", k, err)
				} else if !bytes.Equal(res.Data, want[k]) {
					t.Errorf("%v: concurrent output differs", k)
				}
			})
		}
	}
	wg.Wait()
}
