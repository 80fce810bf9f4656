package imaging

import (
	"image"
	"net/url"
	"testing"

	"github.com/coffer/coffer"
)

// FuzzParse checks that Parse never panics, fails only with EINVALID, and that the
// options it accepts are valid, normalised, plan without panicking, and round-trip
// through Canonical.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"", "w=800", "w=800&h=600&fit=cover&crop=north&b=2&q=70&f=webp", "f=auto&b=.5",
		"w=1&w=2", "gravity=smart&h=3&w=9", "f=png&q=1", "b=100.00&fit=contain&w=1&h=1",
		"X-Coffer-Signature=x&w=10", "w=%00", "b=1e2", "r=90&w=10&h=3", "r=270&h=5&fit=contain", "r=45",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		o, err := Parse(q)
		if err != nil {
			if coffer.ErrorCode(err) != coffer.EINVALID {
				t.Fatalf("Parse(%q) = %v, want EINVALID", raw, err)
			}
			return
		}
		if err := o.Validate(); err != nil {
			t.Fatalf("Parse(%q) = %+v, which Validate refuses: %v", raw, o, err)
		}
		if o.Normalize() != o {
			t.Fatalf("Parse(%q) = %+v, not normalised", raw, o)
		}
		c := o.Canonical()
		back, err := ParseCanonical(c)
		if err != nil || back != o {
			t.Fatalf("Parse(%q) = %+v; canonical %q parses to %+v, %v", raw, o, c, back, err)
		}
		p := o.Plan(4000, 3)
		if p.Canvas.X < 1 || p.Canvas.Y < 1 || !p.Crop.In(image.Rect(0, 0, p.Resize.X, p.Resize.Y)) {
			t.Fatalf("Plan of %+v = %+v", o, p)
		}
	})
}

// FuzzNegotiate feeds arbitrary Accept headers and source types to the negotiation: it
// never panics, q-values stay within 0..1, and the chosen format is one the engine can
// write.
func FuzzNegotiate(f *testing.F) {
	for _, s := range []string{"", "image/avif,image/webp,*/*", "image/webp;q=0", "image/*;q=0.5, image/avif;q=1",
		"IMAGE/WEBP;Q=0.9", "image/webp;q=1e0", ";;,,", "image/avif;q=0.001;level=2"} {
		f.Add(s, "image/jpeg")
	}
	f.Add("image/webp", "image/gif")
	f.Add("*/*", "application/octet-stream")
	f.Fuzz(func(t *testing.T, accept, srcMime string) {
		for typ, q := range ParseAccept(accept) {
			if q < 0 || q > 1 {
				t.Fatalf("ParseAccept(%q)[%q] = %v", accept, typ, q)
			}
		}
		o, vary := Options{Width: 10, Format: FormatAuto}.Negotiate(accept, srcMime)
		if !vary || !o.Format.IsOutput() {
			t.Fatalf("Negotiate(%q, %q) = %q, vary %v", accept, srcMime, o.Format, vary)
		}
		if _, err := ParseCanonical(o.Canonical()); err != nil {
			t.Fatalf("canonical form of negotiated options: %v", err)
		}
	})
}

// FuzzCanonical builds options field by field, as code does (a value past the end of
// a list of names is used as it is): for every valid o, ParseCanonical(o.Canonical())
// gives o.Normalize(). The image worker relies on it: the server sends the canonical
// string and the worker transforms what it parses.
func FuzzCanonical(f *testing.F) {
	f.Add(800, 600, 0, 2.0, uint8(4), uint8(2), uint8(0), uint8(0), "")
	f.Add(0, 10, 100, 0.005, uint8(1), uint8(9), uint8(10), uint8(1), "")
	f.Add(0, 0, 0, 0.0, uint8(0), uint8(0), uint8(0), uint8(2), "")
	f.Add(1, 1, 1, 99.999, uint8(3), uint8(0), uint8(0), uint8(3), "")
	f.Add(5, 5, 0, 0.0, uint8(99), uint8(99), uint8(99), uint8(45), "bmp")
	formats := []Format{FormatKeep, FormatAuto, JPEG, PNG, WebP, AVIF}
	fits := []Fit{"", FitInside, FitOutside, FitCover, FitContain, FitFill}
	gravities := []Gravity{"", GravityCenter, GravityNorth, GravitySouth, GravityEast, GravityWest, GravityNorthEast,
		GravityNorthWest, GravitySouthEast, GravitySouthWest, GravityAttention, GravityEntropy}
	rotations := []int{0, 90, 180, 270}
	f.Fuzz(func(t *testing.T, w, h, q int, b float64, fi, fiti, gi, ri uint8, name string) {
		o := Options{Width: w, Height: h, Quality: q, Blur: b,
			Format: pick(formats, fi, Format(name)), Fit: pick(fits, fiti, Fit(name)), Gravity: pick(gravities, gi, Gravity(name)),
			Rotate: pick(rotations, ri, int(ri))}
		if o.Validate() != nil {
			return
		}
		c := o.Canonical()
		back, err := ParseCanonical(c)
		if err != nil || back != o.Normalize() {
			t.Fatalf("%+v: canonical %q parses to %+v, %v; want %+v", o, c, back, err, o.Normalize())
		}
	})
}

// pick returns names[i], or other if i is past the end.
func pick[T any](names []T, i uint8, other T) T {
	if int(i) < len(names) {
		return names[i]
	}
	return other
}

// FuzzParseCanonical feeds arbitrary strings to ParseCanonical, as a stored cache key
// or a hostile image-worker peer would: it never panics, fails only with EINVALID,
// and accepts only the canonical form of valid, normalised options.
func FuzzParseCanonical(f *testing.F) {
	for _, s := range []string{"", "q=80&w=10", "w=10", "b=2&f=webp&q=80&w=400", "f=png&fit=cover&gravity=center&h=20&w=10",
		"q=80&w=010", "Q=80", "q=80;w=1", "%zz", "q=80&w=10&w=10", "f=jpg&q=80", "b=0.5&q=80&w=1", "q=80&r=90&w=10", "q=80&r=0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		o, err := ParseCanonical(s)
		if err != nil {
			if coffer.ErrorCode(err) != coffer.EINVALID {
				t.Fatalf("ParseCanonical(%q) = %v, want EINVALID", s, err)
			}
			return
		}
		if o.Validate() != nil || o.Normalize() != o || o.Canonical() != s {
			t.Fatalf("ParseCanonical(%q) = %+v: canonical %q, valid: %v", s, o, o.Canonical(), o.Validate())
		}
	})
}
