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
		"X-Coffer-Signature=x&w=10", "w=%00", "b=1e2",
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
