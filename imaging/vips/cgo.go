//go:build !novips

package vips

// #cgo pkg-config: vips
// #include <malloc.h>
// #include <stdlib.h>
// #include <vips/vips.h>
import "C"

import (
	"errors"
	"unsafe"

	govips "github.com/davidbyttow/govips/v2/vips"
)

// allowedLoaders are the libvips loader classes left unblocked: the formats that
// imaging.Sniff recognises.
var allowedLoaders = []string{
	"VipsForeignLoadJpeg", "VipsForeignLoadPng", "VipsForeignLoadNsgif",
	"VipsForeignLoadWebp", "VipsForeignLoadHeif",
}

// restrictLoaders blocks every libvips loader but allowedLoaders, process-wide
// (libvips 8.13+), so that no code path can reach the SVG, PDF, ImageMagick, FITS,
// raw, CSV or matrix loaders with untrusted bytes.
func restrictLoaders() error {
	if C.vips_version(0) == 8 && C.vips_version(1) < 13 {
		return errors.New("libvips 8.13 or later is required to block loaders")
	}
	setBlocked("VipsForeignLoad", true)
	for _, name := range allowedLoaders {
		setBlocked(name, false)
	}
	return nil
}

func setBlocked(class string, blocked bool) {
	name := C.CString(class)
	defer C.free(unsafe.Pointer(name))
	state := C.gboolean(0)
	if blocked {
		state = 1
	}
	C.vips_operation_block_set(name, state)
}

// limitArenas caps glibc's malloc arenas at 2, as MALLOC_ARENA_MAX=2 would: libvips
// allocates from many threads, and one arena per thread keeps freed memory mapped.
func limitArenas() {
	C.mallopt(C.M_ARENA_MAX, 2)
}

// toMemory renders the image ref holds into memory, in place (vips_image_wio_input):
// operations that read their input out of order, such as a quarter turn, then work
// on a sequentially loaded source, as libvips' thumbnail does before it applies an
// EXIF orientation. The memory is the image's width × height × pixel size. Only for
// an image no other goroutine uses; a kill flag set on it stops the rendering.
func toMemory(ref *govips.ImageRef) error {
	p := imagePointer(ref)
	if p == nil {
		return errors.New("no libvips image to render into memory")
	}
	if C.vips_image_wio_input(p) != 0 {
		msg := C.vips_error_buffer_copy()
		defer C.g_free(C.gpointer(msg))
		return errors.New(C.GoString(msg))
	}
	return nil
}
