package imaging

import "image"

// Plan is the geometry of one transform, computed from the source size before any
// pixel is decoded, so that limits can be checked first. The engine scales the whole
// (autorotated) source to Resize, keeps the Crop part of it and places that at Offset
// on a canvas of size Canvas (padding only with FitContain).
type Plan struct {
	Resize image.Point     // the source is scaled to exactly this size
	Crop   image.Rectangle // the part of the resized image that is kept
	Smart  bool            // the engine picks a Crop of the same size (attention, entropy)
	Canvas image.Point     // the output size
	Offset image.Point     // top-left of the kept part on the canvas
}

// Pixels returns the larger of the intermediate and the output pixel counts, the
// figure Config.MaxOutputPixels limits.
func (p Plan) Pixels() int64 {
	return max(int64(p.Resize.X)*int64(p.Resize.Y), int64(p.Canvas.X)*int64(p.Canvas.Y))
}

// Plan returns the geometry of o for a source of srcW×srcH pixels, measured after EXIF
// autorotation (both must be positive). Images may be enlarged: Config.MaxOutputPixels
// bounds the result. o should be normalised (Parse and Negotiate do it).
func (o Options) Plan(srcW, srcH int) Plan {
	w, h := int64(o.Width), int64(o.Height)
	sw, sh := int64(max(srcW, 1)), int64(max(srcH, 1))
	var r image.Point
	switch {
	case w == 0 && h == 0:
		r = image.Pt(int(sw), int(sh))
	case h == 0:
		r = image.Pt(int(w), scaled(sh, w, sw))
	case w == 0:
		r = image.Pt(scaled(sw, h, sh), int(h))
	case o.Fit == FitFill:
		r = image.Pt(int(w), int(h))
	case (sw*h <= sh*w) == (o.Fit == FitInside || o.Fit == FitContain || o.Fit == ""):
		r = image.Pt(scaled(sw, h, sh), int(h)) // height is the binding dimension
	default:
		r = image.Pt(int(w), scaled(sh, w, sw))
	}
	p := Plan{Resize: r, Crop: image.Rect(0, 0, r.X, r.Y), Canvas: r}
	switch {
	case w == 0 || h == 0:
	case o.Fit == FitCover:
		p.Canvas = image.Pt(int(w), int(h))
		p.Crop = gravityRect(r, p.Canvas, o.Gravity)
		p.Smart = o.Gravity == GravityAttention || o.Gravity == GravityEntropy
	case o.Fit == FitContain:
		p.Canvas = image.Pt(int(w), int(h))
		p.Offset = image.Pt((p.Canvas.X-r.X)/2, (p.Canvas.Y-r.Y)/2)
	}
	return p
}

// scaled returns round(n*num/den), at least 1.
func scaled(n, num, den int64) int {
	return int(max((2*n*num+den)/(2*den), 1))
}

// gravityRect returns the size-sized rectangle of an area placed by g.
func gravityRect(area, size image.Point, g Gravity) image.Rectangle {
	dx, dy := area.X-size.X, area.Y-size.Y
	x, y := dx/2, dy/2
	switch g {
	case GravityNorth, GravityNorthEast, GravityNorthWest:
		y = 0
	case GravitySouth, GravitySouthEast, GravitySouthWest:
		y = dy
	}
	switch g {
	case GravityWest, GravityNorthWest, GravitySouthWest:
		x = 0
	case GravityEast, GravityNorthEast, GravitySouthEast:
		x = dx
	}
	return image.Rect(x, y, x+size.X, y+size.Y)
}
