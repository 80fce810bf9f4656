//go:build !novips

package vips

import (
	"bytes"
	"encoding/binary"
	"testing"
)

// riff builds a WebP file of the given chunks (fourcc, data).
func riff(chunks ...string) []byte {
	var body []byte
	for i := 0; i < len(chunks); i += 2 {
		body = append(body, chunks[i]...)
		body = binary.LittleEndian.AppendUint32(body, uint32(len(chunks[i+1])))
		body = append(body, chunks[i+1]...)
		if len(chunks[i+1])%2 == 1 {
			body = append(body, 0)
		}
	}
	out := append([]byte("RIFF"), binary.LittleEndian.AppendUint32(nil, uint32(4+len(body)))...)
	return append(append(out, "WEBP"...), body...)
}

func TestStripWebP(t *testing.T) {
	vp8x := "\x2c\x00\x00\x00" + "\x01\x00\x00\x01\x00\x00" // ICC|EXIF|XMP, 2×2
	tests := []struct {
		name    string
		in, out []byte
		ok      bool
	}{
		{"simple untouched", riff("VP8 ", "abcd"), riff("VP8 ", "abcd"), true},
		{"metadata removed", riff("VP8X", vp8x, "ICCP", "icc", "VP8 ", "abcde", "EXIF", "secret", "XMP ", "<x/>"),
			riff("VP8X", "\x20"+vp8x[1:], "ICCP", "icc", "VP8 ", "abcde"), true},
		{"not riff", []byte("RIFX\x00\x00\x00\x00WEBP"), nil, false},
		{"chunk too long", riff("VP8 ", "abcd")[:18], nil, false},
		{"short header", append(riff("VP8 ", "ab"), 'V'), nil, false},
	}
	for _, tt := range tests {
		got, err := stripWebP(tt.in)
		if (err == nil) != tt.ok || !bytes.Equal(got, tt.out) {
			t.Errorf("%s: stripWebP = %q, %v; want %q", tt.name, got, err, tt.out)
		}
	}
}
