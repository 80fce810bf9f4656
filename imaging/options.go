package imaging

import (
	"math"
	"net/url"
	"strconv"
	"strings"

	"github.com/coffer/coffer"
)

// Limits of the transform parameters.
const (
	MaxDimension   = 8192 // largest w and h
	MaxBlur        = 100  // largest blur sigma
	DefaultQuality = 80   // quality of lossy output when q is not given
)

// Fit says how an image is resized when both a width and a height are given. With
// only one of them the other follows from the aspect ratio and Fit does not matter.
type Fit string

// Fit modes, named and defined as in sharp.
const (
	FitInside  Fit = "inside"  // keep the aspect ratio, as large as possible within w×h
	FitOutside Fit = "outside" // keep the aspect ratio, as small as possible while covering w×h
	FitCover   Fit = "cover"   // default: keep the aspect ratio, cover w×h, crop the overflow (see Gravity)
	FitContain Fit = "contain" // keep the aspect ratio, fit within w×h, pad to exactly w×h
	FitFill    Fit = "fill"    // stretch to exactly w×h, ignoring the aspect ratio
)

// Gravity says which part of the image FitCover keeps.
type Gravity string

// Gravities. Attention and Entropy let the engine find the interesting part of the image.
const (
	GravityCenter    Gravity = "center"
	GravityNorth     Gravity = "north"
	GravitySouth     Gravity = "south"
	GravityEast      Gravity = "east"
	GravityWest      Gravity = "west"
	GravityNorthEast Gravity = "northeast"
	GravityNorthWest Gravity = "northwest"
	GravitySouthEast Gravity = "southeast"
	GravitySouthWest Gravity = "southwest"
	GravityAttention Gravity = "attention" // features, skin tones, saturated colours (libvips)
	GravityEntropy   Gravity = "entropy"   // the busiest region (libvips)
)

var fitNames = map[string]Fit{
	"inside": FitInside, "outside": FitOutside, "cover": FitCover, "contain": FitContain, "fill": FitFill,
}

var gravityNames = map[string]Gravity{
	"center": GravityCenter, "centre": GravityCenter, "north": GravityNorth, "south": GravitySouth,
	"east": GravityEast, "west": GravityWest, "northeast": GravityNorthEast,
	"northwest": GravityNorthWest, "southeast": GravitySouthEast, "southwest": GravitySouthWest,
	"attention": GravityAttention, "smart": GravityAttention, "entropy": GravityEntropy,
}

// Options is one requested transformation. The zero value asks for none.
type Options struct {
	Width, Height int     // output size in pixels, 0 = from the other one or the source
	Quality       int     // 1..100 for lossy formats; 0 = DefaultQuality
	Blur          float64 // Gaussian blur sigma in output pixels, 0..100; 0 = none
	Format        Format
	Fit           Fit     // used only when both Width and Height are set; "" = FitCover
	Gravity       Gravity // used only with FitCover; "" = GravityCenter

	// Rotate turns the image clockwise by 0, 90, 180 or 270 degrees, after the EXIF
	// orientation is applied and before resizing and cropping: Width, Height, Fit and
	// Gravity describe the rotated image (a 400×300 source with Rotate 90 and Width
	// 150 gives 150×200). The engine scales first and turns the scaled image,
	// which is equivalent for quarter turns and touches fewer pixels (see Plan).
	Rotate int
}

// IsZero reports whether o asks for no transformation at all: the original is served.
func (o Options) IsZero() bool { return o == Options{} }

// Normalize returns o with defaults written out and irrelevant fields dropped, so that
// equivalent options compare equal: Fit and Gravity only when both dimensions are set
// (a Gravity without a Fit implies FitCover), Quality is DefaultQuality when unset and
// dropped for PNG, Blur is rounded to two decimals. Normalize is idempotent; Parse and
// Negotiate return normalised options.
func (o Options) Normalize() Options {
	o.Blur = math.Round(o.Blur*100) / 100
	if o.Width == 0 || o.Height == 0 {
		o.Fit, o.Gravity = "", ""
	} else {
		if o.Fit == "" && o.Gravity != "" {
			o.Fit = FitCover
		}
		if o.Fit == "" { // hasura-storage: w and h give exactly w×h, cropped from the centre
			o.Fit = FitCover
		}
		if o.Fit != FitCover {
			o.Gravity = ""
		} else if o.Gravity == "" {
			o.Gravity = GravityCenter
		}
	}
	switch {
	case o.Format == PNG:
		o.Quality = 0
	case o.Quality == 0 && !o.IsZero():
		o.Quality = DefaultQuality
	}
	return o
}

// Parse reads transform options from a query: w and h (1..8192), q (1..100), b (blur
// sigma 0..100), f (auto, same, jpeg/jpg, png, webp, avif), fit (cover, contain, fill,
// inside, outside), crop or gravity (center, north, ..., southwest, attention/smart,
// entropy) and r (rotation: 0, 90, 180, 270 degrees clockwise). Values are
// case-insensitive; other parameters are ignored. A bad or repeated parameter is
// EINVALID with a message that names it. The result is normalised.
func Parse(q url.Values) (Options, error) {
	var o Options
	for _, p := range params {
		vs, ok := q[p.name]
		if !ok {
			continue
		}
		if len(vs) != 1 {
			return Options{}, invalid(p.name, "must be given at most once")
		}
		if _, dup := q[p.alias]; p.alias != "" && dup {
			return Options{}, invalid(p.name, "gravity and crop are the same parameter, give one")
		}
		if !p.set(&o, vs[0]) {
			return Options{}, invalid(p.name, p.rule)
		}
	}
	return o.Normalize(), nil
}

// param is one query parameter of Parse: set stores a value, false if it is invalid.
type param struct {
	name, alias, rule string
	set               func(o *Options, v string) bool
}

// Rules of the parameters, shared by Parse and Validate.
const (
	ruleDim     = "must be an integer from 1 to 8192"
	ruleQuality = "must be an integer from 1 to 100"
	ruleBlur    = "must be a number from 0 to 100"
	ruleFormat  = "must be one of auto, same, jpeg, png, webp, avif"
	ruleFit     = "must be one of cover, contain, fill, inside, outside"
	ruleGravity = "must be one of center, north, south, east, west, northeast, northwest, southeast, southwest, attention, entropy"
	ruleRotate  = "must be one of 0, 90, 180, 270"
)

var params = []param{
	{name: "w", rule: ruleDim, set: func(o *Options, v string) bool { return parseInt(v, 1, MaxDimension, &o.Width) }},
	{name: "h", rule: ruleDim, set: func(o *Options, v string) bool { return parseInt(v, 1, MaxDimension, &o.Height) }},
	{name: "q", rule: ruleQuality, set: func(o *Options, v string) bool { return parseInt(v, 1, 100, &o.Quality) }},
	{name: "b", rule: ruleBlur, set: func(o *Options, v string) bool { return parseBlur(v, &o.Blur) }},
	{name: "f", rule: ruleFormat, set: func(o *Options, v string) bool { return lookup(formatNames, v, &o.Format) }},
	{name: "fit", rule: ruleFit, set: func(o *Options, v string) bool { return lookup(fitNames, v, &o.Fit) }},
	{name: "crop", rule: ruleGravity, set: func(o *Options, v string) bool { return lookup(gravityNames, v, &o.Gravity) }},
	{name: "gravity", alias: "crop", rule: ruleGravity, set: func(o *Options, v string) bool { return lookup(gravityNames, v, &o.Gravity) }},
	{name: "r", rule: ruleRotate, set: func(o *Options, v string) bool { return parseRotate(v, &o.Rotate) }},
}

func invalid(name, rule string) error {
	return coffer.Errorf(coffer.EINVALID, "invalid %s: %s", name, rule)
}

// parseInt accepts only decimal digits (no sign, no spaces) with a value in [lo, hi].
func parseInt(v string, lo, hi int, dst *int) bool {
	if v == "" || len(v) > 9 || strings.Trim(v, "0123456789") != "" {
		return false
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		return false
	}
	*dst = n
	return true
}

// parseBlur accepts digits with at most one decimal point ("2", "0.5", ".5", "2.")
// and a value in [0, MaxBlur]; no signs, exponents, hex, NaN or infinities.
func parseBlur(v string, dst *float64) bool {
	if len(v) > 16 || strings.Trim(v, "0123456789.") != "" || strings.Count(v, ".") > 1 || strings.Trim(v, ".") == "" {
		return false
	}
	b, err := strconv.ParseFloat(v, 64)
	if err != nil || b < 0 || b > MaxBlur {
		return false
	}
	*dst = b
	return true
}

// parseRotate accepts the decimal quarter turns 0, 90, 180 and 270 (as parseInt).
func parseRotate(v string, dst *int) bool {
	var deg int
	if !parseInt(v, 0, 270, &deg) || !validRotation(deg) {
		return false
	}
	*dst = deg
	return true
}

// validRotation reports whether deg is a quarter turn Rotate accepts.
func validRotation(deg int) bool {
	return deg == 0 || deg == 90 || deg == 180 || deg == 270
}

func lookup[T any](names map[string]T, v string, dst *T) bool {
	t, ok := names[strings.ToLower(v)]
	if ok {
		*dst = t
	}
	return ok
}

// Validate checks options built in code (Parse already validates): EINVALID with the
// same messages as Parse.
func (o Options) Validate() error {
	checks := []struct {
		ok         bool
		name, rule string
	}{
		{o.Width >= 0 && o.Width <= MaxDimension, "w", ruleDim},
		{o.Height >= 0 && o.Height <= MaxDimension, "h", ruleDim},
		{o.Quality >= 0 && o.Quality <= 100, "q", ruleQuality},
		{o.Blur >= 0 && o.Blur <= MaxBlur, "b", ruleBlur}, // false for NaN
		{o.Format == FormatKeep || known(formatNames, o.Format), "f", ruleFormat},
		{o.Fit == "" || known(fitNames, o.Fit), "fit", ruleFit},
		{o.Gravity == "" || known(gravityNames, o.Gravity), "gravity", ruleGravity},
		{validRotation(o.Rotate), "r", ruleRotate},
	}
	for _, c := range checks {
		if !c.ok {
			return invalid(c.name, c.rule)
		}
	}
	return nil
}

func known[T comparable](names map[string]T, v T) bool {
	for _, n := range names {
		if n == v {
			return true
		}
	}
	return false
}

// Canonical returns the normalised options as a query string with sorted keys
// ("b=2&f=webp&q=80&w=400"), "" for no transformation. Equivalent requests give
// the same string (parameter order and case, aliases, defaults, irrelevant fields do
// not matter); Parse of the string gives back o.Normalize(). Use it for variant cache
// keys (after Negotiate) and for presigned-URL signatures (before).
func (o Options) Canonical() string {
	o = o.Normalize()
	q := url.Values{}
	add := func(k, v string) {
		if v != "" && v != "0" {
			q.Set(k, v)
		}
	}
	add("w", strconv.Itoa(o.Width))
	add("h", strconv.Itoa(o.Height))
	add("q", strconv.Itoa(o.Quality))
	add("b", strconv.FormatFloat(o.Blur, 'f', -1, 64))
	add("f", string(o.Format))
	add("fit", string(o.Fit))
	add("gravity", string(o.Gravity))
	add("r", strconv.Itoa(o.Rotate))
	return q.Encode()
}

// ParseCanonical parses a string made by Canonical, EINVALID if s is not in canonical
// form (so a stored cache key can be checked before it is trusted).
func ParseCanonical(s string) (Options, error) {
	q, err := url.ParseQuery(s)
	if err != nil {
		return Options{}, coffer.Errorf(coffer.EINVALID, "invalid canonical transform %q", s)
	}
	o, err := Parse(q)
	if err != nil {
		return Options{}, err
	}
	if o.Canonical() != s {
		return Options{}, coffer.Errorf(coffer.EINVALID, "transform %q is not in canonical form %q", s, o.Canonical())
	}
	return o, nil
}
