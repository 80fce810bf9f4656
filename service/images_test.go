package service_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/blob"
	"github.com/coffer/coffer/blob/memblob"
	"github.com/coffer/coffer/imaging"
	"github.com/coffer/coffer/service"
)

// labelEngine "transforms" a source into "w=<width>:<source>" as PNG, counting its
// calls; a source containing POISON kills its worker, alone in it.
type labelEngine struct{ calls atomic.Int64 }

// Transform labels the source with the width, or fails as a crashed worker.
func (e *labelEngine) Transform(_ context.Context, src io.Reader, o imaging.Options) (*imaging.Result, error) {
	e.calls.Add(1)
	data, err := io.ReadAll(src)
	if err != nil {
		return nil, err
	}
	if strings.Contains(string(data), "POISON") {
		return nil, &coffer.Error{Code: coffer.EUNAVAILABLE, Message: "worker died", Err: &imaging.CrashError{InFlight: 1, Err: errors.New("killed")}}
	}
	return &imaging.Result{Data: fmt.Appendf(nil, "w=%d:%s", o.Width, data), Format: imaging.PNG, Width: o.Width, Height: 1}, nil
}

// Supports reports that the engine writes PNG and JPEG.
func (*labelEngine) Supports(f imaging.Format) bool { return f == imaging.PNG || f == imaging.JPEG }

// Pool returns a pool of one worker, for the gauges.
func (*labelEngine) Pool() *imaging.Pool { return imaging.NewPool(1, 1) }

// Close does nothing: nothing runs in the background.
func (*labelEngine) Close() error { return nil }

// pngFile is an upload sniffed as image/png.
func pngFile(body string) part {
	c := "\x89PNG\r\n\x1a\n" + body
	return part{name: "p.png", contents: c, size: int64(len(c))}
}

// OpenVariant checks read access before anything else, needs an engine and an image,
// keeps variants in the variant cache by the source's etag, and makes them again
// after a replace.
func TestOpenVariant(t *testing.T) {
	ctx := context.Background()
	blobs := blob.New(memblob.New())
	svc, _, _ := cachedService(t, service.DefaultConfig(), openSQLite(t), blobs)
	must(t, svc.SetRules(ctx, coffer.AdminPrincipal(), []byte(ownerRules)))
	admin, viewer := coffer.AdminPrincipal(), &coffer.Principal{Role: "viewer"}
	w10, w20 := imaging.Options{Width: 10}, imaging.Options{Width: 20}
	files, err := upload(svc, admin, "default", pngFile("one"), text("not an image"))
	must(t, err)
	img, txt := files[0], files[1]

	wantCode(t, "no engine", fourth(svc.OpenVariant(ctx, admin, img.ID, w10, "")), coffer.ENOTIMPLEMENTED)
	eng := &labelEngine{}
	svc.UseImages(eng)
	wantCode(t, "a role that may read nothing", fourth(svc.OpenVariant(ctx, &coffer.Principal{Role: "nobody"}, img.ID, w10, "")), coffer.EFORBIDDEN)
	wantCode(t, "a missing file", fourth(svc.OpenVariant(ctx, viewer, coffer.NewFileID(), w10, "")), coffer.ENOTFOUND)
	wantCode(t, "a text file", fourth(svc.OpenVariant(ctx, viewer, txt.ID, w10, "")), coffer.EUNSUPPORTED)
	if n := eng.calls.Load(); n != 0 {
		t.Fatalf("the engine ran %d times for refused requests", n)
	}

	variant := func(o imaging.Options) *service.Variant {
		t.Helper()
		_, _, v, err := svc.OpenVariant(ctx, viewer, img.ID, o, "")
		must(t, err)
		return v
	}
	a, b, c := variant(w10), variant(w10), variant(w20)
	if string(a.Data) != "w=10:"+pngFile("one").contents || a.MIME != "image/png" || string(c.Data) != "w=20:"+pngFile("one").contents {
		t.Fatalf("variants %q (%s) and %q", a.Data, a.MIME, c.Data)
	}
	if eng.calls.Load() != 2 || a.ETag != b.ETag || a.ETag == c.ETag || a.ETag == img.ETag {
		t.Fatalf("%d transformations; etags %s %s %s (source %s)", eng.calls.Load(), a.ETag, b.ETag, c.ETag, img.ETag)
	}

	rp, err := svc.BeginReplace(ctx, admin, img.ID)
	must(t, err)
	defer rp.Abort(ctx)
	two := pngFile("two")
	must(t, rp.AddContent(ctx, two.name, "", strings.NewReader(two.contents), two.size))
	_, err = rp.Commit(ctx)
	must(t, err)
	if d := variant(w10); string(d.Data) != "w=10:"+two.contents || d.ETag == a.ETag || eng.calls.Load() != 3 {
		t.Fatalf("after the replace: %q, etag %s, %d transformations", d.Data, d.ETag, eng.calls.Load())
	}
}

// A source that kills the image worker alone twice is quarantined: refused as
// unsupported without running the engine, while other images are still transformed.
// A source whose blob is gone is a logged internal error.
func TestOpenVariantFailures(t *testing.T) {
	ctx := context.Background()
	svc, _, blobs := newService(t, "")
	eng := &labelEngine{}
	svc.UseImages(eng)
	admin, w := coffer.AdminPrincipal(), imaging.Options{Width: 10}
	files, err := upload(svc, admin, "default", pngFile("POISON"), pngFile("fine"), pngFile("lost"))
	must(t, err)
	for i := range 2 {
		wantCode(t, fmt.Sprint("crash ", i+1), fourth(svc.OpenVariant(ctx, admin, files[0].ID, w, "")), coffer.EUNAVAILABLE)
	}
	wantCode(t, "quarantined", fourth(svc.OpenVariant(ctx, admin, files[0].ID, w, "")), coffer.EUNSUPPORTED)
	if n := eng.calls.Load(); n != 2 {
		t.Fatalf("the engine ran %d times, want 2 (not for the quarantined source)", n)
	}
	must(t, fourth(svc.OpenVariant(ctx, admin, files[1].ID, w, "")))
	must(t, blobs.Delete(ctx, files[2].BlobKey))
	wantCode(t, "source blob gone", fourth(svc.OpenVariant(ctx, admin, files[2].ID, w, "")), coffer.EINTERNAL)
}

// fourth returns the error of a call's results.
func fourth[T, U, V any](_ T, _ U, _ V, err error) error { return err }
