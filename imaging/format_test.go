package imaging

import (
	"bytes"
	"image"
	"image/gif"
	"image/jpeg"
	"image/png"
	"testing"
)

func encoded(t *testing.T, enc func(*bytes.Buffer, image.Image) error) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := enc(&b, image.NewGray(image.Rect(0, 0, 4, 4))); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestSniff(t *testing.T) {
	ftyp := func(brands ...string) []byte {
		b := []byte{0, 0, 0, byte(8 + 4*len(brands)), 'f', 't', 'y', 'p'}
		for _, s := range brands {
			b = append(b, s...)
		}
		return append(b, make([]byte, 32)...)
	}
	tests := []struct {
		name string
		data []byte
		want Format
		ok   bool
	}{
		{"jpeg", encoded(t, func(b *bytes.Buffer, m image.Image) error { return jpeg.Encode(b, m, nil) }), JPEG, true},
		{"png", encoded(t, func(b *bytes.Buffer, m image.Image) error { return png.Encode(b, m) }), PNG, true},
		{"gif", encoded(t, func(b *bytes.Buffer, m image.Image) error { return gif.Encode(b, m, nil) }), GIF, true},
		{"webp", []byte("RIFF\x10\x00\x00\x00WEBPVP8L\x00\x00\x00\x00"), WebP, true},
		{"avif", ftyp("avif", "\x00\x00\x00\x00", "mif1", "miaf"), AVIF, true},
		{"avif compatible brand", ftyp("mif1", "\x00\x00\x00\x00", "avif"), AVIF, true},
		{"heic", ftyp("heic", "\x00\x00\x00\x00", "mif1", "heic"), HEIF, true},
		{"mp4 is not an image", ftyp("isom", "\x00\x00\x02\x00", "isom", "mp41"), "", false},
		{"brand is not the minor version", ftyp("isom", "avif"), "", false},
		{"ftyp size too large", append([]byte("\x7f\x00\x00\x00ftypavif"), make([]byte, 40)...), "", false},
		{"svg", []byte(`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 1e9 1e9"/>`), "", false},
		{"pdf", []byte("%PDF-1.7\n"), "", false},
		{"bmp", []byte("BM\x00\x00\x00\x00\x00\x00\x00\x00\x36\x00\x00\x00"), "", false},
		{"tiff", []byte("II*\x00\x08\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"), "", false},
		{"text", []byte("hello, world"), "", false},
		{"empty", nil, "", false},
		{"riff but wave", []byte("RIFF\x10\x00\x00\x00WAVEfmt \x00\x00\x00\x00"), "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := Sniff(tt.data)
			if got != tt.want || ok != tt.ok {
				t.Errorf("Sniff = %q, %v; want %q, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestFormatMIME(t *testing.T) {
	tests := []struct {
		mime string
		want Format
		ok   bool
	}{
		{"image/jpeg", JPEG, true},
		{"image/JPG", JPEG, true},
		{"image/png; charset=binary", PNG, true},
		{"image/webp", WebP, true},
		{"image/avif", AVIF, true},
		{"image/gif", GIF, true},
		{"image/heic", HEIF, true},
		{"image/svg+xml", "", false},
		{"text/plain", "", false},
		{"", "", false},
		{";;", "", false},
	}
	for _, tt := range tests {
		got, ok := FormatFromMIME(tt.mime)
		if got != tt.want || ok != tt.ok {
			t.Errorf("FormatFromMIME(%q) = %q, %v; want %q, %v", tt.mime, got, ok, tt.want, tt.ok)
		}
		if ok && FormatFromMIMEMust(t, got.MIME()) != got {
			t.Errorf("%q.MIME() = %q does not map back", got, got.MIME())
		}
	}
	for _, f := range []Format{FormatKeep, FormatAuto, "bmp"} {
		if f.MIME() != "" || f.IsOutput() {
			t.Errorf("%q: MIME %q, IsOutput %v", f, f.MIME(), f.IsOutput())
		}
	}
}

func FormatFromMIMEMust(t *testing.T, m string) Format {
	t.Helper()
	f, ok := FormatFromMIME(m)
	if !ok {
		t.Fatalf("FormatFromMIME(%q) failed", m)
	}
	return f
}
