package imaging

import "testing"

const chromeAccept = "image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8"

func TestNegotiate(t *testing.T) {
	noAVIF := func(f Format) bool { return f != AVIF }
	tests := []struct {
		name     string
		o        Options
		accept   string
		src      string
		canWrite func(Format) bool
		want     Format
		vary     bool
	}{
		{"auto chrome", Options{Format: FormatAuto}, chromeAccept, "image/jpeg", nil, AVIF, true},
		{"auto chrome no avif encoder", Options{Format: FormatAuto}, chromeAccept, "image/jpeg", noAVIF, WebP, true},
		{"auto webp only", Options{Format: FormatAuto}, "image/webp,*/*", "image/png", nil, WebP, true},
		{"auto avif refused", Options{Format: FormatAuto}, "image/avif;q=0,image/webp", "image/png", nil, WebP, true},
		{"auto both refused", Options{Format: FormatAuto}, "image/avif;q=0, image/webp; q=0, */*", "image/png", nil, PNG, true},
		{"auto webp preferred by q", Options{Format: FormatAuto}, "image/avif;q=0.5,image/webp;q=0.9", "image/png", nil, WebP, true},
		{"auto tie prefers avif", Options{Format: FormatAuto}, "image/webp;q=0.7,image/avif;q=0.7", "image/png", nil, AVIF, true},
		{"auto wildcard only", Options{Format: FormatAuto}, "image/*,*/*", "image/jpeg", nil, JPEG, true},
		{"auto no header", Options{Format: FormatAuto}, "", "image/gif", nil, PNG, true},
		{"auto malformed q skipped", Options{Format: FormatAuto}, "image/avif;q=abc,image/webp;q=2", "image/jpeg", nil, JPEG, true},
		{"auto case insensitive", Options{Format: FormatAuto}, "Image/WebP;Q=0.5", "image/jpeg", nil, WebP, true},
		{"keep jpeg", Options{Width: 5}, chromeAccept, "image/jpeg", nil, JPEG, false},
		{"keep png", Options{Width: 5}, chromeAccept, "image/png", nil, PNG, false},
		{"keep webp", Options{Width: 5}, "", "image/webp", nil, WebP, false},
		{"keep gif is png", Options{Width: 5}, "", "image/gif", nil, PNG, false},
		{"keep heic is jpeg", Options{Width: 5}, "", "image/heic", nil, JPEG, false},
		{"keep avif without encoder", Options{Width: 5}, "", "image/avif", noAVIF, JPEG, false},
		{"keep unknown is jpeg", Options{Width: 5}, "", "application/octet-stream", nil, JPEG, false},
		{"explicit untouched", Options{Format: PNG}, chromeAccept, "image/jpeg", nil, PNG, false},
		{"zero untouched", Options{}, chromeAccept, "image/jpeg", nil, FormatKeep, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, vary := tt.o.Normalize().NegotiateFor(tt.accept, tt.src, tt.canWrite)
			if got.Format != tt.want || vary != tt.vary {
				t.Errorf("NegotiateFor = %s, vary %v; want %s, %v", got.Format, vary, tt.want, tt.vary)
			}
			if got != got.Normalize() {
				t.Errorf("result %+v not normalised", got)
			}
		})
	}
}

func TestNegotiateDropsQualityForPNG(t *testing.T) {
	o, _ := Options{Width: 10, Quality: 30}.Negotiate("", "image/png")
	if o.Quality != 0 || o.Canonical() != "f=png&w=10" {
		t.Errorf("Negotiate = %+v (%q), want PNG without quality", o, o.Canonical())
	}
}

func TestParseAccept(t *testing.T) {
	a := ParseAccept(" text/html ;level=1; q=0.5 , image/AVIF;q=0,image/avif;q=1, bad;q=1.5,,*/*")
	want := Accept{"text/html": 0.5, "image/avif": 0, "*/*": 1}
	if len(a) != len(want) {
		t.Fatalf("ParseAccept = %v, want %v", a, want)
	}
	for k, v := range want {
		if got, ok := a[k]; !ok || got != v {
			t.Errorf("ParseAccept[%q] = %v, %v; want %v", k, got, ok, v)
		}
	}
}
