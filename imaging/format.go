package imaging

import (
	"bytes"
	"encoding/binary"
	"mime"
	"strings"
)

// Format is an image file format. Output formats are JPEG, PNG, WebP and AVIF; GIF and
// HEIF are only read. In Options, FormatKeep and FormatAuto are requests that
// Negotiate resolves to a concrete format.
type Format string

// Formats.
const (
	FormatKeep Format = ""     // keep the source format (GIF and HEIF sources become PNG and JPEG)
	FormatAuto Format = "auto" // the best format the client accepts (Negotiate)
	JPEG       Format = "jpeg"
	PNG        Format = "png"
	WebP       Format = "webp"
	AVIF       Format = "avif"
	GIF        Format = "gif"  // source only
	HEIF       Format = "heif" // source only (HEIC photos)
)

// formatNames maps the accepted spellings of the f parameter (lower case) to formats.
var formatNames = map[string]Format{
	"same": FormatKeep, "auto": FormatAuto,
	"jpeg": JPEG, "jpg": JPEG, "png": PNG, "webp": WebP, "avif": AVIF,
}

// MIME returns the media type of f, or "" for FormatKeep, FormatAuto and unknown formats.
func (f Format) MIME() string {
	switch f {
	case JPEG, PNG, WebP, AVIF, GIF, HEIF:
		return "image/" + string(f)
	}
	return ""
}

// IsOutput reports whether f is a format an engine can write.
func (f Format) IsOutput() bool {
	return f == JPEG || f == PNG || f == WebP || f == AVIF
}

// FormatFromMIME returns the format of a media type such as "image/jpeg" or
// "image/heic; q=1"; ok is false for types that are not images coffer reads.
func FormatFromMIME(mediaType string) (f Format, ok bool) {
	t, _, err := mime.ParseMediaType(mediaType)
	if err != nil {
		return "", false
	}
	switch strings.TrimPrefix(t, "image/") {
	case "jpeg", "jpg", "pjpeg":
		return JPEG, true
	case "png", "apng":
		return PNG, true
	case "webp":
		return WebP, true
	case "avif":
		return AVIF, true
	case "gif":
		return GIF, true
	case "heic", "heif", "heic-sequence", "heif-sequence":
		return HEIF, true
	}
	return "", false
}

// Sniff returns the format of an image from its first bytes (16 are enough for all
// but HEIF/AVIF, whose ftyp box may list brands further on). ok is false for anything
// else, including SVG, PDF, BMP and TIFF, which coffer refuses to decode.
func Sniff(b []byte) (f Format, ok bool) {
	switch {
	case bytes.HasPrefix(b, []byte{0xFF, 0xD8, 0xFF}):
		return JPEG, true
	case bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")):
		return PNG, true
	case bytes.HasPrefix(b, []byte("GIF87a")), bytes.HasPrefix(b, []byte("GIF89a")):
		return GIF, true
	case len(b) >= 16 && string(b[:4]) == "RIFF" && string(b[8:12]) == "WEBP":
		return WebP, true
	}
	return sniffISOBMFF(b)
}

// sniffISOBMFF recognises AVIF and HEIF files by the brands of their leading ftyp box.
func sniffISOBMFF(b []byte) (Format, bool) {
	if len(b) < 16 || string(b[4:8]) != "ftyp" {
		return "", false
	}
	size := int(binary.BigEndian.Uint32(b[:4]))
	if size < 16 || size > len(b) || size > 4096 {
		return "", false
	}
	heif := false
	for i := 8; i+4 <= size; i += 4 {
		if i == 12 { // minor version, not a brand
			continue
		}
		switch string(b[i : i+4]) {
		case "avif", "avis":
			return AVIF, true
		case "heic", "heix", "heim", "heis", "hevc", "hevx", "mif1", "msf1":
			heif = true
		}
	}
	if heif {
		return HEIF, true
	}
	return "", false
}
