//go:build !novips

package vips

import (
	"errors"
	"strings"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/imaging"
)

// vipsMessage returns the libvips part of a govips error, without the Go stack trace
// govips appends.
func vipsMessage(err error) string {
	msg, _, _ := strings.Cut(err.Error(), "\nStack:")
	return strings.TrimSpace(msg)
}

// Fragments of libvips and decoder messages, lower case.
var (
	notImage = []string{"not a known", "unsupported image format", "is blocked", "not in a known format"}
	damaged  = []string{
		"premature end", "truncated", "corrupt", "unexpected end", "read error", "not a jpeg",
		"bogus", "load", "libpng", "spng", "nsgif", "unable to parse", "out of data",
		"end of file", "invalid",
	}
)

// loadError turns an error of reading or decoding a sniffed source into EUNSUPPORTED:
// the bytes are not a usable image.
func loadError(err error) error {
	msg := vipsMessage(err)
	if containsAny(msg, notImage) {
		return &coffer.Error{Code: coffer.EUNSUPPORTED, Message: coffer.ErrorMessage(imaging.ErrNotImage), Err: errors.New(msg)}
	}
	return &coffer.Error{Code: coffer.EUNSUPPORTED, Message: "image file is damaged or truncated", Err: errors.New(msg)}
}

// opError turns an error of a processing operation into EINTERNAL.
func opError(err error, doing string) error {
	return coffer.Internal(errors.New(vipsMessage(err)), "image transformation failed while "+doing)
}

// encodeError classifies an error of the encode step, where libvips also decodes
// (lazily): a missing encoder is ENOTIMPLEMENTED, a decoder complaint a damaged
// source (EUNSUPPORTED), anything else EINTERNAL.
func encodeError(err error, f imaging.Format) error {
	msg := vipsMessage(err)
	switch {
	case containsAny(msg, []string{"encoder", "unsupported compression"}):
		return &coffer.Error{Code: coffer.ENOTIMPLEMENTED, Message: string(f) + " output is not available on this server", Err: errors.New(msg)}
	case containsAny(msg, damaged):
		return damagedError(msg)
	}
	return coffer.Internal(errors.New(msg), "image transformation failed while encoding")
}

// renderError classifies an error of rendering pixels before the encode step (libvips
// decodes then): a decoder complaint is a damaged source (EUNSUPPORTED), anything
// else EINTERNAL.
func renderError(err error, doing string) error {
	if msg := vipsMessage(err); containsAny(msg, damaged) {
		return damagedError(msg)
	}
	return opError(err, doing)
}

// damagedError is EUNSUPPORTED for a source libvips could not decode.
func damagedError(msg string) error {
	return &coffer.Error{Code: coffer.EUNSUPPORTED, Message: "image file is damaged or truncated", Err: errors.New(msg)}
}

func containsAny(s string, fragments []string) bool {
	s = strings.ToLower(s)
	for _, f := range fragments {
		if strings.Contains(s, f) {
			return true
		}
	}
	return false
}
