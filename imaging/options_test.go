package imaging

import (
	"net/url"
	"strings"
	"testing"

	"github.com/coffer/coffer"
)

func query(t *testing.T, s string) url.Values {
	t.Helper()
	q, err := url.ParseQuery(s)
	if err != nil {
		t.Fatalf("ParseQuery(%q): %v", s, err)
	}
	return q
}

func TestParse(t *testing.T) {
	tests := []struct {
		query string
		want  Options
	}{
		{"", Options{}},
		{"X-Coffer-Signature=abc&token=x", Options{}},
		{"w=800", Options{Width: 800, Quality: 80}},
		{"h=0600", Options{Height: 600, Quality: 80}},
		{"w=1&h=8192", Options{Width: 1, Height: 8192, Quality: 80, Fit: FitCover, Gravity: GravityCenter}},
		{"w=1&h=8192&fit=inside", Options{Width: 1, Height: 8192, Quality: 80, Fit: FitInside}},
		{"w=100&h=50&fit=COVER", Options{Width: 100, Height: 50, Quality: 80, Fit: FitCover, Gravity: GravityCenter}},
		{"w=100&h=50&crop=North", Options{Width: 100, Height: 50, Quality: 80, Fit: FitCover, Gravity: GravityNorth}},
		{"w=100&h=50&gravity=smart", Options{Width: 100, Height: 50, Quality: 80, Fit: FitCover, Gravity: GravityAttention}},
		{"w=100&h=50&fit=fill&crop=north", Options{Width: 100, Height: 50, Quality: 80, Fit: FitFill}},
		{"w=100&fit=cover&crop=north", Options{Width: 100, Quality: 80}},
		{"fit=cover", Options{}},
		{"q=80", Options{Quality: 80}},
		{"q=1", Options{Quality: 1}},
		{"b=0", Options{}},
		{"b=0.001", Options{}},
		{"b=2", Options{Blur: 2, Quality: 80}},
		{"b=.5", Options{Blur: 0.5, Quality: 80}},
		{"b=2.", Options{Blur: 2, Quality: 80}},
		{"b=100", Options{Blur: 100, Quality: 80}},
		{"b=1.23456", Options{Blur: 1.23, Quality: 80}},
		{"f=JPG", Options{Format: JPEG, Quality: 80}},
		{"f=png&q=50", Options{Format: PNG}},
		{"f=same", Options{}},
		{"f=auto", Options{Format: FormatAuto, Quality: 80}},
		{"f=avif&q=40", Options{Format: AVIF, Quality: 40}},
		{"r=90", Options{Rotate: 90, Quality: 80}},
		{"r=0180&w=10", Options{Rotate: 180, Width: 10, Quality: 80}},
		{"r=270&w=10&h=20&crop=north", Options{Rotate: 270, Width: 10, Height: 20, Quality: 80, Fit: FitCover, Gravity: GravityNorth}},
		{"r=0", Options{}},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			got, err := Parse(query(t, tt.query))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if got != tt.want {
				t.Errorf("Parse = %+v, want %+v", got, tt.want)
			}
			if err := got.Validate(); err != nil {
				t.Errorf("Validate of parsed options: %v", err)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		query, msg string
	}{
		{"w=0", "invalid w: must be an integer from 1 to 8192"},
		{"w=8193", "invalid w: must be an integer from 1 to 8192"},
		{"w=-5", "invalid w: must be an integer from 1 to 8192"},
		{"w=+5", "invalid w: must be an integer from 1 to 8192"},
		{"w=1e3", "invalid w: must be an integer from 1 to 8192"},
		{"w=", "invalid w: must be an integer from 1 to 8192"},
		{"w=%2010", "invalid w: must be an integer from 1 to 8192"},
		{"w=99999999999999999999", "invalid w: must be an integer from 1 to 8192"},
		{"h=abc", "invalid h: must be an integer from 1 to 8192"},
		{"q=0", "invalid q: must be an integer from 1 to 100"},
		{"q=101", "invalid q: must be an integer from 1 to 100"},
		{"b=-1", "invalid b: must be a number from 0 to 100"},
		{"b=100.01", "invalid b: must be a number from 0 to 100"},
		{"b=NaN", "invalid b: must be a number from 0 to 100"},
		{"b=inf", "invalid b: must be a number from 0 to 100"},
		{"b=1e1", "invalid b: must be a number from 0 to 100"},
		{"b=0x1p1", "invalid b: must be a number from 0 to 100"},
		{"b=.", "invalid b: must be a number from 0 to 100"},
		{"b=1.2.3", "invalid b: must be a number from 0 to 100"},
		{"f=gif", "invalid f: must be one of auto, same, jpeg, png, webp, avif"},
		{"f=", "invalid f: must be one of auto, same, jpeg, png, webp, avif"},
		{"fit=stretch", "invalid fit: must be one of cover, contain, fill, inside, outside"},
		{"crop=top", "invalid crop: must be one of center"},
		{"gravity=", "invalid gravity: must be one of center"},
		{"w=1&w=2", "invalid w: must be given at most once"},
		{"w=1&w=1", "invalid w: must be given at most once"},
		{"crop=north&gravity=north", "invalid gravity: gravity and crop are the same parameter, give one"},
		{"r=45", "invalid r: must be one of 0, 90, 180, 270"},
		{"r=360", "invalid r: must be one of 0, 90, 180, 270"},
		{"r=-90", "invalid r: must be one of 0, 90, 180, 270"},
		{"r=90.0", "invalid r: must be one of 0, 90, 180, 270"},
		{"r=", "invalid r: must be one of 0, 90, 180, 270"},
		{"r=left", "invalid r: must be one of 0, 90, 180, 270"},
		{"r=90&r=90", "invalid r: must be given at most once"},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			o, err := Parse(query(t, tt.query))
			if coffer.ErrorCode(err) != coffer.EINVALID {
				t.Fatalf("Parse = %+v, %v; want EINVALID", o, err)
			}
			if msg := coffer.ErrorMessage(err); !strings.HasPrefix(msg, tt.msg) {
				t.Errorf("message %q, want prefix %q", msg, tt.msg)
			}
		})
	}
}

// TestCanonicalEquivalence checks that equivalent requests share one canonical form
// and different ones do not.
func TestCanonicalEquivalence(t *testing.T) {
	groups := [][]string{
		{"", "fit=cover", "crop=north", "b=0", "f=same", "X-Coffer-Expires=1", "r=0", "r=000"},
		{"w=800", "w=800&q=80", "W=3&w=0800&b=0", "w=800&fit=fill&crop=east"},
		{"w=800&h=600&fit=inside", "h=600&w=800&fit=inside", "w=800&h=600&fit=INSIDE&q=80", "w=800&h=600&crop=west&fit=inside"},
		{"w=8&h=6", "w=8&h=6&fit=cover", "w=8&h=6&crop=center", "w=8&h=6&gravity=centre&fit=cover"},
		{"w=8&h=6&crop=smart", "w=8&h=6&gravity=attention&fit=cover"},
		{"f=JPEG", "f=jpg", "f=jpeg&q=80"},
		{"f=png", "f=PNG&q=10", "q=99&f=png"},
		{"b=2", "b=2.0", "b=2.000", "b=02&q=80", "b=1.999"},
		{"q=80"},
		{"q=50"},
		{"f=auto"},
		{"r=90", "r=090", "r=90&q=80"},
		{"r=180"},
		{"r=270"},
		{"w=8&h=6&r=90", "r=90&h=6&w=8&fit=cover&crop=center"},
		{"w=8&h=6&r=270"},
	}
	seen := map[string]int{}
	for i, g := range groups {
		want := canonical(t, g[0])
		for _, s := range g[1:] {
			if got := canonical(t, s); got != want {
				t.Errorf("Canonical(%q) = %q, want %q as for %q", s, got, want, g[0])
			}
		}
		if j, dup := seen[want]; dup {
			t.Errorf("groups %d and %d share canonical form %q", j, i, want)
		}
		seen[want] = i
	}
}

func canonical(t *testing.T, s string) string {
	t.Helper()
	o, err := Parse(query(t, s))
	if err != nil {
		t.Fatalf("Parse(%q): %v", s, err)
	}
	return o.Canonical()
}

func TestCanonicalForm(t *testing.T) {
	tests := []struct{ query, want string }{
		{"", ""},
		{"w=400&h=300&b=2&f=webp", "b=2&f=webp&fit=cover&gravity=center&h=300&q=80&w=400"},
		{"w=400&h=300&fit=inside", "fit=inside&h=300&q=80&w=400"},
		{"w=400&h=300&crop=southeast", "fit=cover&gravity=southeast&h=300&q=80&w=400"},
		{"b=0.5&f=png", "b=0.5&f=png"},
		{"w=400&h=300&r=90", "fit=cover&gravity=center&h=300&q=80&r=90&w=400"},
		{"r=0&w=400", "q=80&w=400"},
	}
	for _, tt := range tests {
		got := canonical(t, tt.query)
		if got != tt.want {
			t.Errorf("Canonical(%q) = %q, want %q", tt.query, got, tt.want)
		}
		o, err := ParseCanonical(got)
		if err != nil || o.Canonical() != got {
			t.Errorf("ParseCanonical(%q) = %+v, %v", got, o, err)
		}
	}
}

func TestParseCanonicalRefusesOtherForms(t *testing.T) {
	for _, s := range []string{"w=0800", "w=800&q=80", "w=800", "f=JPEG&q=80", "w=1&w=1&q=80", "%zz", "q=80&r=090", "q=80&r=0", "q=80&r=45", "r=90"} {
		if _, err := ParseCanonical(s); coffer.ErrorCode(err) != coffer.EINVALID {
			t.Errorf("ParseCanonical(%q) = %v, want EINVALID", s, err)
		}
	}
}

func TestNormalizeIdempotent(t *testing.T) {
	opts := []Options{
		{},
		{Gravity: GravityEast, Width: 3, Height: 4},
		{Fit: FitContain, Width: 3},
		{Blur: 0.004},
		{Quality: 50, Format: PNG, Width: 2},
		{Format: WebP},
		{Rotate: 270},
		{Rotate: 90, Width: 5, Height: 7, Gravity: GravityEast},
	}
	for _, o := range opts {
		n := o.Normalize()
		if n.Normalize() != n {
			t.Errorf("Normalize(%+v) = %+v, not idempotent", o, n)
		}
		if p, err := ParseCanonical(n.Canonical()); err != nil || p != n {
			t.Errorf("ParseCanonical(Canonical(%+v)) = %+v, %v", n, p, err)
		}
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		o    Options
		code string
	}{
		{Options{}, ""},
		{Options{Width: 8192, Height: 1, Quality: 100, Blur: 100, Format: AVIF, Fit: FitOutside, Gravity: GravityEntropy}, ""},
		{Options{Width: -1}, coffer.EINVALID},
		{Options{Height: 9000}, coffer.EINVALID},
		{Options{Quality: 101}, coffer.EINVALID},
		{Options{Blur: -0.5}, coffer.EINVALID},
		{Options{Format: GIF}, coffer.EINVALID},
		{Options{Format: "JPEG"}, coffer.EINVALID},
		{Options{Fit: "stretch"}, coffer.EINVALID},
		{Options{Gravity: "top"}, coffer.EINVALID},
		{Options{Rotate: 90}, ""},
		{Options{Rotate: 45}, coffer.EINVALID},
		{Options{Rotate: -90}, coffer.EINVALID},
		{Options{Rotate: 360}, coffer.EINVALID},
	}
	for _, tt := range tests {
		if got := coffer.ErrorCode(tt.o.Validate()); got != tt.code {
			t.Errorf("Validate(%+v) = %q, want %q", tt.o, got, tt.code)
		}
	}
}
