//go:build !novips

package vips

import (
	"encoding/binary"
	"errors"
)

// stripWebP removes the EXIF and XMP chunks of a WebP file and their VP8X flags.
// libvips 8.14's webpsave ignores "strip" and copies the source's EXIF (GPS
// positions, serial numbers) into its output.
func stripWebP(b []byte) ([]byte, error) {
	if len(b) < 12 || string(b[:4]) != "RIFF" || string(b[8:12]) != "WEBP" {
		return nil, errors.New("webpsave wrote no RIFF/WEBP header")
	}
	out := make([]byte, 12, len(b))
	copy(out, b[:12])
	for rest := b[12:]; len(rest) > 0; {
		if len(rest) < 8 {
			return nil, errors.New("webpsave wrote a truncated chunk header")
		}
		size := int(binary.LittleEndian.Uint32(rest[4:8]))
		end := 8 + size + size&1 // chunks are padded to an even size
		if size < 0 || end > len(rest) {
			return nil, errors.New("webpsave wrote a chunk beyond the end of the file")
		}
		chunk := rest[:end]
		rest = rest[end:]
		switch string(chunk[:4]) {
		case "EXIF", "XMP ":
			continue
		case "VP8X":
			if size < 1 {
				return nil, errors.New("webpsave wrote an empty VP8X chunk")
			}
			out = append(out, chunk...)
			out[len(out)-end+8] &^= 0x08 | 0x04 // EXIF and XMP flags
			continue
		}
		out = append(out, chunk...)
	}
	binary.LittleEndian.PutUint32(out[4:8], uint32(len(out)-8))
	return out, nil
}
