// Package vips implements imaging.Engine with libvips (through govips v2), the only
// cgo package of coffer. libvips is started once per process, with its operation
// cache off and one thread per image, and only the JPEG, PNG, GIF, WebP and HEIF/AVIF
// loaders are left unblocked: sources are sniffed in Go first and anything else
// (SVG, PDF, BMP, TIFF, ImageMagick formats, ...) is refused before libvips sees it.
//
// Start-up also caps glibc's malloc arenas at 2 (like MALLOC_ARENA_MAX=2), which
// keeps the RSS of a busy server from growing with every libvips thread.
//
// A transform is a pipeline of named steps with a context check between them:
//
//	read    the source into memory (at most Config.MaxSourceBytes) and sniff its format
//	header  width, height, frames and EXIF orientation from the header alone; refuse a
//	        source over MaxSourcePixels or MaxFrames and a plan over MaxOutputPixels
//	resize  libvips thumbnail from the buffer: shrink-on-load, sequential access,
//	        EXIF autorotation, first frame only
//	crop    cover crops at the gravity; contain pads (white, or transparent for
//	        images with alpha)
//	blur    Gaussian blur (premultiplied alpha)
//	encode  JPEG (flattened on white), PNG, WebP or AVIF, metadata stripped
//
// libvips evaluates lazily, so decoding happens during encode; a step that has
// started is not interrupted when the context ends.
//
// libvips error strings become typed coffer errors here and nowhere else.
//
// Only cmd/coffer-imager links this package into a binary (coffer serve reaches it
// through imaging/remote). Built with -tags novips, the package has the same New and
// an Engine whose Transform answers coffer.ENOTIMPLEMENTED, so the module builds and
// tests without cgo.
package vips
