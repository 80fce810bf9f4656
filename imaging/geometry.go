package imaging

import "image"

// Plan is the geometry of one transform, computed from the source size before any
// pixel is decoded, so that limits can be checked first. The engine turns the whole
// (autorotated) source clockwise by Rotate degrees and scales it to Resize, keeps the
// Crop part of it and places that at Offset on a canvas of size Canvas (padding only
// with FitContain). All sizes are in the rotated orientation; the engine may scale
// first, to Turn(Resize), and turn the scaled image, which is equivalent.
type Plan struct {
	Resize image.Point     // the turned source is scaled to exactly this size
	Rotate int             // clockwise turn of the source: 0, 90, 180 or 270 degrees
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
// bounds the result. o should be normalised (Parse and Negotiate do it). Width and
// Height refer to the rotated image: a quarter turn swaps the source's sides before
// the fit is computed.
func (o Options) Plan(srcW, srcH int) Plan {
	p := Plan{Rotate: o.Rotate}
	src := p.Turn(image.Pt(srcW, srcH)) // the rotated source's size
	o.fit(&p, int64(max(src.X, 1)), int64(max(src.Y, 1)))
	return p
}

// Turn returns size turned by p.Rotate: its sides swapped for a quarter turn, else
// size. A turned size turns back the same way, so Turn also gives a rotated size
// before the turn, e.g. Turn(Resize) for an engine that scales before it turns.
func (p Plan) Turn(size image.Point) image.Point {
	if p.Rotate == 90 || p.Rotate == 270 {
		return image.Pt(size.Y, size.X)
	}
	return size
}

// fit fills in p's Resize, Crop, Canvas, Offset and Smart for a source of sw×sh
// pixels, all in the same orientation.
func (o Options) fit(p *Plan, sw, sh int64) {
	w, h := int64(o.Width), int64(o.Height)
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
	p.Resize, p.Crop, p.Canvas = r, image.Rect(0, 0, r.X, r.Y), r
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
