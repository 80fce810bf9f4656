//go:build !novips

package vips

// #cgo pkg-config: vips
// #include <vips/vips.h>
import "C"

import (
	"errors"
	"reflect"
	"sync"
	"unsafe"

	govips "github.com/davidbyttow/govips/v2/vips"
)

// killer stops a running libvips evaluation: libvips computes lazily, mostly inside
// the encoder, so checking ctx between the pipeline's steps cannot stop a transform
// that is already encoding. libvips checks an image's kill flag each time a region
// of it is prepared (vips_region_prepare, vips_region_prepare_to), i.e. for every
// tile of every image in the pipeline, and fails the evaluation with "killed". The
// job tracks each image it makes (after every step and just before the encoder
// starts); kill sets the flag on all of them, so the encoder's threads stop within
// one tile of work.
//
// Every tracked image holds a reference of its own (g_object_ref), so kill never
// touches a freed image even after govips replaced it in the ImageRef; release drops
// them. The mutex makes kill (on ctx's AfterFunc goroutine) and track/release (on
// the job's goroutine) safe together.
type killer struct {
	mu     sync.Mutex
	imgs   []*C.VipsImage
	killed bool
}

// track records the image ref holds now; if kill already ran, it is killed at once.
func (k *killer) track(ref *govips.ImageRef) {
	p := imagePointer(ref)
	if p == nil {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if n := len(k.imgs); n > 0 && k.imgs[n-1] == p {
		return
	}
	C.g_object_ref(C.gpointer(p))
	k.imgs = append(k.imgs, p)
	if k.killed {
		C.vips_image_set_kill(p, C.TRUE)
	}
}

// kill sets the kill flag on every tracked image and on those tracked later.
func (k *killer) kill() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.killed = true
	for _, p := range k.imgs {
		C.vips_image_set_kill(p, C.TRUE)
	}
}

// wasKilled reports whether kill ran.
func (k *killer) wasKilled() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.killed
}

// release drops the references track took.
func (k *killer) release() {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, p := range k.imgs {
		C.g_object_unref(C.gpointer(p))
	}
	k.imgs = nil
}

// imageField returns the offset of govips' unexported ImageRef.image field after
// checking that it is a *C.VipsImage (cgo names the type _Ctype_struct__VipsImage
// in govips' package too, with the same size), so that a govips upgrade that
// renames or retypes the field fails loudly, when libvips starts, instead of
// reading garbage.
var imageField = sync.OnceValues(func() (uintptr, error) {
	f, ok := reflect.TypeFor[govips.ImageRef]().FieldByName("image")
	want := reflect.TypeFor[C.VipsImage]()
	if !ok || f.Type.Kind() != reflect.Pointer || f.Type.Elem().Name() != want.Name() || f.Type.Elem().Size() != want.Size() {
		return 0, errors.New("govips.ImageRef has no field image *C.VipsImage, so transformations could not be cancelled: check imaging/vips/kill.go against this govips version")
	}
	return f.Offset, nil
})

// imagePointer returns the *C.VipsImage ref holds (nil if none). Call it only on
// the goroutine that runs operations on ref (they replace the field).
func imagePointer(ref *govips.ImageRef) *C.VipsImage {
	off, err := imageField()
	if ref == nil || err != nil {
		return nil
	}
	return *(**C.VipsImage)(unsafe.Add(unsafe.Pointer(ref), off))
}
