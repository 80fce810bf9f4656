package bench

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"image"
	"image/color"
	"image/jpeg"
	"io"
	"math/rand/v2"
)

// Fixture is a file that a scenario downloads (or uploads): deterministic content
// derived from its name, generated on demand so it never sits in memory whole.
type Fixture struct {
	Name        string // file name, also the {file} of a URL template
	Size        int64  // bytes; -1 when known only after generating (the JPEG)
	ContentType string
	jpeg        bool
}

// Open returns a reader of f's content; the same name always yields the same bytes.
func (f Fixture) Open() io.ReadCloser {
	if f.jpeg {
		return newJPEGReader()
	}
	return io.NopCloser(newPatternReader(f.Name, f.Size))
}

// patternBlock is the period of patternReader's output: incompressible enough that
// gzip or a deduplicating disk cannot shortcut the benchmark.
const patternBlock = 64 << 10

// patternReader yields size deterministic pseudo-random bytes seeded by a name: a
// 64 KiB random block repeated, each repetition XORed with its index so that no two
// blocks of a file are equal.
type patternReader struct {
	block []byte // patternBlockOf(seed): read only, may be shared
	off   int64
	size  int64
}

func newPatternReader(seed string, size int64) *patternReader {
	return &patternReader{block: patternBlockOf(seed), size: size}
}

// patternBlockOf returns the random block a patternReader seeded by seed repeats.
func patternBlockOf(seed string) []byte {
	h := fnv.New64a()
	h.Write([]byte(seed))
	rng := rand.New(rand.NewPCG(h.Sum64(), 0x636f66666572))
	block := make([]byte, patternBlock)
	for i := 0; i < len(block); i += 8 {
		binary.LittleEndian.PutUint64(block[i:], rng.Uint64())
	}
	return block
}

// Read implements io.Reader.
func (p *patternReader) Read(b []byte) (int, error) {
	if p.off >= p.size {
		return 0, io.EOF
	}
	n := 0
	for n < len(b) && p.off < p.size {
		i := int(p.off % patternBlock)
		k := copy(b[n:], p.block[i:])
		k = int(min(int64(k), p.size-p.off))
		xorMark(b[n:n+k], byte(p.off/patternBlock))
		n += k
		p.off += int64(k)
	}
	return n, nil
}

// xorMark XORs every byte of b with mark, eight at a time.
func xorMark(b []byte, mark byte) {
	if mark == 0 {
		return
	}
	m := uint64(mark) * 0x0101010101010101
	i := 0
	for ; i+8 <= len(b); i += 8 {
		binary.LittleEndian.PutUint64(b[i:], binary.LittleEndian.Uint64(b[i:])^m)
	}
	for ; i < len(b); i++ {
		b[i] ^= mark
	}
}

// The image fixture: a 4000×3000 noisy gradient that encodes to about 5.3 MB of
// JPEG at quality 95, like a photo from a phone.
const (
	imageWidth   = 4000
	imageHeight  = 3000
	imageQuality = 95
	imageNoise   = 28 // amplitude of the per-pixel noise; sets the file size
)

// gradientImage is an image.Image computed pixel by pixel, so the 4000×3000 source
// never exists as a buffer: a diagonal colour gradient plus deterministic noise.
type gradientImage struct{}

func (gradientImage) ColorModel() color.Model { return color.RGBAModel }
func (gradientImage) Bounds() image.Rectangle { return image.Rect(0, 0, imageWidth, imageHeight) }

// At returns the pixel at (x, y).
func (gradientImage) At(x, y int) color.Color {
	h := uint32(x)*0x9E3779B1 ^ uint32(y)*0x85EBCA77
	h ^= h >> 15
	h *= 0x2C1B3C6D
	h ^= h >> 12
	n := func(shift uint) int { return int(h>>shift&0xff)*imageNoise/255 - imageNoise/2 }
	clamp := func(v int) uint8 { return uint8(min(max(v, 0), 255)) }
	r := 255 * x / imageWidth
	g := 255 * y / imageHeight
	b := 255 - (r+g)/2
	return color.RGBA{R: clamp(r + n(0)), G: clamp(g + n(8)), B: clamp(b + n(16)), A: 255}
}

// newJPEGReader streams the encoded image through a pipe; closing the reader stops
// the encoder goroutine.
func newJPEGReader() io.ReadCloser {
	pr, pw := io.Pipe()
	go func() {
		err := jpeg.Encode(pw, gradientImage{}, &jpeg.Options{Quality: imageQuality})
		pw.CloseWithError(err)
	}()
	return pr
}

// jpegSize encodes the image once to learn its size.
func jpegSize() (int64, error) {
	r := newJPEGReader()
	defer r.Close()
	n, err := io.Copy(io.Discard, r)
	if err != nil {
		return 0, fmt.Errorf("encoding the image fixture: %w", err)
	}
	return n, nil
}
