//go:build !novips

package vips

import (
	"bytes"
	"context"
	"encoding/binary"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"math/rand/v2"
	"testing"

	"github.com/coffer/coffer/imaging"
	govips "github.com/davidbyttow/govips/v2/vips"
	"golang.org/x/image/webp"
)

// gradient returns a deterministic noisy colour gradient; with alpha, the left
// half fades from transparent to opaque.
func gradient(w, h int, alpha bool, seed uint64) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	rng := rand.New(rand.NewPCG(seed, 1))
	for y := range h {
		for x := range w {
			n := rng.IntN(25) - 12
			a := uint8(255)
			if alpha && x < w/2 {
				a = uint8(255 * x / max(w/2, 1))
			}
			img.SetNRGBA(x, y, color.NRGBA{
				R: clamp(255*x/max(w-1, 1) + n), G: clamp(255*y/max(h-1, 1) + n),
				B: clamp(128 + n), A: a,
			})
		}
	}
	return img
}

func clamp(v int) uint8 { return uint8(min(max(v, 0), 255)) }

// The encoders write to memory and fail only on a bug: they panic.

func encodeJPEG(img image.Image, q int) []byte {
	var b bytes.Buffer
	must(jpeg.Encode(&b, img, &jpeg.Options{Quality: q}))
	return b.Bytes()
}

func encodePNG(img image.Image) []byte {
	var b bytes.Buffer
	must(png.Encode(&b, img))
	return b.Bytes()
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}

// withOrientation inserts an EXIF APP1 segment after the SOI marker of a JPEG, with
// the given orientation and an ImageDescription of privateText.
func withOrientation(jpg []byte, orientation uint16) []byte {
	const desc = privateText + "\x00"
	var tiff bytes.Buffer
	be := func(v any) { binary.Write(&tiff, binary.BigEndian, v) }
	tiff.WriteString("MM\x00\x2a")
	be(uint32(8))           // offset of IFD0
	be(uint16(2))           // two entries, in tag order
	be([]uint16{0x010E, 2}) // ImageDescription, ASCII
	be([]uint32{uint32(len(desc)), 8 + 2 + 2*12 + 4})
	be([]uint16{0x0112, 3}) // Orientation, SHORT
	be(uint32(1))
	be([2]uint16{orientation, 0})
	be(uint32(0)) // no next IFD
	tiff.WriteString(desc)
	payload := append([]byte("Exif\x00\x00"), tiff.Bytes()...)
	seg := []byte{0xFF, 0xE1, 0, 0}
	binary.BigEndian.PutUint16(seg[2:], uint16(len(payload)+2))
	out := append([]byte{}, jpg[:2]...)
	out = append(out, seg...)
	out = append(out, payload...)
	return append(out, jpg[2:]...)
}

// privateText stands for metadata (GPS position, camera serial) that outputs must drop.
const privateText = "private-metadata-3f9c"

// decoded is an output image read back by an independent decoder.
type decoded struct {
	format imaging.Format
	img    image.Image // nil for AVIF
	w, h   int
}

// decode reads an output with the Go decoders (JPEG, PNG, WebP) or, for AVIF, with
// libvips' own header reader.
func decode(t testing.TB, data []byte) decoded {
	t.Helper()
	f, ok := imaging.Sniff(data)
	if !ok {
		t.Fatalf("output is not a known image: % x", data[:min(len(data), 16)])
	}
	var img image.Image
	var err error
	switch f {
	case imaging.JPEG:
		img, err = jpeg.Decode(bytes.NewReader(data))
	case imaging.PNG:
		img, err = png.Decode(bytes.NewReader(data))
	case imaging.WebP:
		img, err = webp.Decode(bytes.NewReader(data))
	case imaging.AVIF:
		ref, err := govips.NewImageFromBuffer(data)
		if err != nil {
			t.Fatalf("decoding AVIF: %v", err)
		}
		defer ref.Close()
		return decoded{format: f, w: ref.Width(), h: ref.Height()}
	}
	if err != nil {
		t.Fatalf("decoding %s output: %v", f, err)
	}
	b := img.Bounds()
	return decoded{format: f, img: img, w: b.Dx(), h: b.Dy()}
}

func newEngine(t testing.TB, cfg imaging.Config) *Engine {
	t.Helper()
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

func transform(t testing.TB, e *Engine, src []byte, o imaging.Options) (*imaging.Result, error) {
	t.Helper()
	return e.Transform(context.Background(), bytes.NewReader(src), o)
}
