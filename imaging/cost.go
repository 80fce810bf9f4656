package imaging

import (
	"math"

	"github.com/coffer/coffer"
)

// DefaultMaxCost is the default cost budget of one transformation: about 2 s of
// CPU on one core of the reference machine (see Cost). Thumbnails of camera
// photos cost a few percent of it (a 4000×3000 JPEG to 800 px with a σ2 blur:
// ~0.07e9; a 7000×7000 JPEG to 1000 px: ~0.23e9); a 7000×7000 JPEG filled to
// 4000×4000 with a σ50 blur costs ~10e9 and is refused.
const DefaultMaxCost = 2_000_000_000

// The weights of Cost, in estimated nanoseconds of CPU per pixel on the reference
// machine (2 shared vCPUs, libvips 8.14), fitted to the CPU time of the
// transformations in imaging/vips's TestCalibrateCost; the fit is within a factor
// of about 1.5, erring high for small blurs.
const (
	costScanJPEG  = 3  // per source pixel of a JPEG: entropy decoding, even with shrink-on-load
	costDecode    = 6  // per pixel a JPEG decodes to after shrink-on-load
	costDecodeAny = 20 // per source pixel of other formats (no shrink-on-load; zlib, LZW, AV1)
	costFrame     = 2  // per source pixel of each frame after the first (scanned, not transformed)
	costOutput    = 10 // per intermediate or output pixel: resampling, padding, encoding
	costBlur      = 12 // per output pixel and unit of blur sigma (the kernel grows with sigma)
)

// Cost estimates the work of transforming a source with header h along plan p with
// a Gaussian blur of sigma (0: none), in nanoseconds of CPU on the reference
// machine: it grows with the source pixels (and frames) decoded, the output pixels
// and, for blurs, output pixels × sigma. It is known from the header, before any
// pixel is decoded.
func Cost(h Header, p Plan, sigma float64) int64 {
	src := float64(h.Width) * float64(h.Height)
	var decode float64
	if h.Format == JPEG {
		s := float64(jpegShrink(h, p))
		decode = costScanJPEG*src + costDecode*src/(s*s)
	} else {
		decode = costDecodeAny * src
	}
	frames := costFrame * src * float64(max(h.Frames-1, 0))
	out := float64(p.Pixels())
	canvas := float64(p.Canvas.X) * float64(p.Canvas.Y)
	c := decode + frames + costOutput*out + costBlur*canvas*sigma
	return int64(min(c, math.MaxInt64/2))
}

// jpegShrink is the shrink-on-load factor (1, 2, 4 or 8) libvips' thumbnail uses for
// a JPEG, conservatively: it block-shrinks to at least twice the target size, which
// is Resize before the plan's turn.
func jpegShrink(h Header, p Plan) int {
	w, ht := h.Oriented()
	r := p.Turn(p.Resize)
	f := min(float64(w)/float64(max(r.X, 1)), float64(ht)/float64(max(r.Y, 1)))
	switch {
	case f >= 16:
		return 8
	case f >= 8:
		return 4
	case f >= 4:
		return 2
	}
	return 1
}

// CheckCost refuses a transformation whose Cost exceeds MaxCost: EINVALID, since a
// smaller size or blur would do.
func (c Config) CheckCost(h Header, p Plan, sigma float64) error {
	if cost := Cost(h, p, sigma); cost > c.MaxCost {
		return coffer.Errorf(coffer.EINVALID, "transformation is too expensive: its estimated cost %d exceeds the limit %d (--image-max-cost); ask for a smaller w, h or blur",
			cost, c.MaxCost)
	}
	return nil
}
