//go:build !novips

package vips

import (
	"errors"
	"strings"
	"testing"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/imaging"
)

func TestErrorClassification(t *testing.T) {
	stack := "\nStack:\ngoroutine 1 [running]:\nmain.main()\n"
	tests := []struct {
		name  string
		err   error
		code  string
		msg   string
		cause string
	}{
		{"load unknown", loadError(errors.New("VipsForeignLoad: buffer is not in a known format" + stack)), coffer.EUNSUPPORTED, "not an image", "VipsForeignLoad: buffer is not in a known format"},
		{"load blocked", loadError(errors.New("VipsForeignLoad: operation is blocked")), coffer.EUNSUPPORTED, "not an image", ""},
		{"load damaged", loadError(errors.New("VipsJpeg: Premature end of JPEG file" + stack)), coffer.EUNSUPPORTED, "damaged", "VipsJpeg: Premature end of JPEG file"},
		{"encode decodes damaged", encodeError(errors.New("pngload_buffer: libpng read error"+stack), imaging.PNG), coffer.EUNSUPPORTED, "damaged", ""},
		{"encode no encoder", encodeError(errors.New("heifsave: Unsupported compression"), imaging.AVIF), coffer.ENOTIMPLEMENTED, "avif output is not available", ""},
		{"encode no av1", encodeError(errors.New("heifsave: no encoder for AV1"), imaging.AVIF), coffer.ENOTIMPLEMENTED, "avif output", ""},
		{"encode other", encodeError(errors.New("vips_region_prepare: out of order read"+stack), imaging.JPEG), coffer.EINTERNAL, "internal error", "out of order read"},
		{"render decodes damaged", renderError(errors.New("VipsJpeg: Premature end of JPEG file"+stack), "rotating"), coffer.EUNSUPPORTED, "damaged", "Premature end"},
		{"render other", renderError(errors.New("vips_image_wio_input: out of memory"+stack), "rotating"), coffer.EINTERNAL, "internal error", "out of memory"},
		{"op", opError(errors.New("extract_area: bad extract area"+stack), "cropping"), coffer.EINTERNAL, "internal error", "bad extract area"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if coffer.ErrorCode(tt.err) != tt.code || !strings.Contains(coffer.ErrorMessage(tt.err), tt.msg) {
				t.Errorf("got %v, want %s %q", tt.err, tt.code, tt.msg)
			}
			if strings.Contains(tt.err.Error(), "Stack:") || !strings.Contains(tt.err.Error(), tt.cause) {
				t.Errorf("cause in %q: want %q without the Go stack", tt.err, tt.cause)
			}
		})
	}
}
