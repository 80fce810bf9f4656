//go:build !novips

package vips

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"io"
	"sync"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/imaging"
	govips "github.com/davidbyttow/govips/v2/vips"
)

// job is one transform: the state the pipeline steps share.
type job struct {
	cfg      imaging.Config
	opts     imaging.Options // normalised
	canWrite func(imaging.Format) bool

	bufs   *sync.Pool    // where the source buffer comes from and goes back to
	buf    *bytes.Buffer // holds src
	src    []byte
	source imaging.Format // sniffed
	out    imaging.Format
	plan   imaging.Plan
	img    *govips.ImageRef
	data   []byte
	kill   killer // stops libvips when ctx ends
}

// run reads src and transforms it, one named step at a time. When ctx ends, the
// images made so far are killed, which stops libvips within one tile of work, and
// run returns ctx's error (the timeout error if ctx hit the timeout).
func (j *job) run(ctx context.Context, src io.Reader) (*imaging.Result, error) {
	stop := context.AfterFunc(ctx, j.kill.kill)
	defer stop()
	steps := []imaging.Step{
		{Name: "read", Run: func() error { return j.read(src) }},
		{Name: "header", Run: j.header},
		{Name: "resize", Run: j.tracked(j.resize)},
		{Name: "crop", Run: j.tracked(j.crop)},
		{Name: "blur", Run: j.tracked(j.blur)},
		{Name: "encode", Run: j.encode},
	}
	timings, err := imaging.RunSteps(ctx, steps)
	if err != nil && ctx.Err() != nil {
		return nil, j.cfg.ContextError(ctx)
	}
	if err != nil {
		return nil, err
	}
	return &imaging.Result{Data: j.data, Format: j.out, Width: j.img.Width(), Height: j.img.Height(), Steps: timings}, nil
}

// close frees the libvips image (and with it the pipeline's hold on j.src), then
// gives the source buffer back for reuse.
func (j *job) close() {
	j.kill.release()
	if j.img != nil {
		j.img.Close()
	}
	if j.buf != nil && j.bufs != nil {
		j.src = nil
		j.bufs.Put(j.buf)
	}
}

// tracked returns step, followed by tracking the image it left in j.img for kill.
func (j *job) tracked(step func() error) func() error {
	return func() error {
		err := step()
		j.kill.track(j.img)
		return err
	}
}

// read reads the source and refuses anything but the formats libvips may decode.
func (j *job) read(src io.Reader) error {
	var err error
	if j.bufs != nil {
		j.buf = j.bufs.Get().(*bytes.Buffer)
		j.src, err = j.cfg.ReadSourceInto(j.buf, src, imaging.SizeOf(src))
	} else {
		j.src, err = j.cfg.ReadSource(src, imaging.SizeOf(src))
	}
	if err != nil {
		return err
	}
	var ok bool
	if j.source, ok = imaging.Sniff(j.src); !ok {
		return imaging.ErrNotImage
	}
	return nil
}

// header checks the source's size and frame count, the plan and its cost against
// the limits before any pixel is decoded.
func (j *job) header() error {
	h, err := readHeader(j.src, j.source)
	if err != nil {
		return err
	}
	if err := j.cfg.CheckSource(h); err != nil {
		return err
	}
	j.out = outputFormat(j.opts.Format, j.source)
	if !j.canWrite(j.out) {
		return coffer.Errorf(coffer.ENOTIMPLEMENTED, "%s output is not available on this server", j.out)
	}
	j.plan = j.opts.Plan(h.Oriented())
	if err := j.cfg.CheckPlan(j.plan); err != nil {
		return err
	}
	return j.cfg.CheckCost(h, j.plan, j.opts.Blur)
}

// readHeader loads only the header of src (libvips reads pixels lazily).
func readHeader(src []byte, f imaging.Format) (imaging.Header, error) {
	img, err := govips.LoadImageFromBuffer(src, &govips.ImportParams{})
	if err != nil {
		return imaging.Header{}, loadError(err)
	}
	defer img.Close()
	return imaging.Header{
		Format: f, Width: img.Width(), Height: img.PageHeight(),
		Frames: max(img.Pages(), 1), Orientation: img.Orientation(),
	}, nil
}

// outputFormat resolves FormatKeep and FormatAuto (if Negotiate did not) to the
// source format, or to PNG for GIF and JPEG for HEIF.
func outputFormat(f, source imaging.Format) imaging.Format {
	if f != imaging.FormatKeep && f != imaging.FormatAuto {
		return f
	}
	switch source {
	case imaging.GIF:
		return imaging.PNG
	case imaging.HEIF:
		return imaging.JPEG
	}
	return source
}

// resize decodes with shrink-on-load and autorotation to exactly plan.Resize, or for
// smart crops straight to the output size, each before the turn (Plan.Turn), then
// turns the image by plan.Rotate. Turning belongs to this step, next to the EXIF
// autorotation, so that the crop step and the step list (Result.Steps) stay as
// they are.
func (j *job) resize() error {
	size, crop, mode := j.plan.Turn(j.plan.Resize), govips.InterestingNone, govips.SizeForce
	if j.plan.Smart { // libvips' search is the same along either axis: crop, then turn
		size, crop, mode = j.plan.Turn(j.plan.Canvas), interesting(j.opts.Gravity), govips.SizeBoth
	}
	img, err := govips.LoadThumbnailFromBuffer(j.src, size.X, size.Y, crop, mode, nil)
	if err != nil {
		return loadError(err)
	}
	j.img = img
	if got := image.Pt(img.Width(), img.Height()); got != size {
		return coffer.Errorf(coffer.EINTERNAL, "libvips thumbnail made %v, want %v", got, size)
	}
	return j.rotate()
}

// rotate turns the image clockwise by plan.Rotate degrees (0: not at all). A turn
// reads its input out of order, which a sequentially decoded source cannot serve, so
// the scaled image is rendered into memory first (Config.MaxOutputPixels bounds it).
func (j *job) rotate() error {
	var angle govips.Angle
	switch j.plan.Rotate {
	case 90:
		angle = govips.Angle90
	case 180:
		angle = govips.Angle180
	case 270:
		angle = govips.Angle270
	default:
		return nil
	}
	j.kill.track(j.img) // toMemory renders: let kill stop it
	if err := toMemory(j.img); err != nil {
		return renderError(err, "rotating")
	}
	if err := j.img.Rotate(angle); err != nil {
		return opError(err, "rotating")
	}
	return nil
}

func interesting(g imaging.Gravity) govips.Interesting {
	if g == imaging.GravityEntropy {
		return govips.InterestingEntropy
	}
	return govips.InterestingAttention
}

// crop keeps plan.Crop (cover) and pads to plan.Canvas (contain): white, or
// transparent for images with alpha (flattened to white again for JPEG).
func (j *job) crop() error {
	if j.plan.Smart {
		return nil
	}
	c := j.plan.Crop
	if c.Size() != j.plan.Resize {
		if err := j.img.ExtractArea(c.Min.X, c.Min.Y, c.Dx(), c.Dy()); err != nil {
			return opError(err, "cropping")
		}
	}
	if c.Size() != j.plan.Canvas {
		extend := govips.ExtendWhite
		if j.img.HasAlpha() {
			extend = govips.ExtendBlack
		}
		err := j.img.Embed(j.plan.Offset.X, j.plan.Offset.Y, j.plan.Canvas.X, j.plan.Canvas.Y, extend)
		if err != nil {
			return opError(err, "padding")
		}
	}
	return nil
}

// blur applies a Gaussian blur, premultiplying alpha so that transparent pixels do
// not bleed their colour.
func (j *job) blur() error {
	if j.opts.Blur == 0 {
		return nil
	}
	if err := j.img.PremultiplyAlpha(); err != nil {
		return opError(err, "blurring")
	}
	if err := j.img.GaussianBlur(j.opts.Blur); err != nil {
		return opError(err, "blurring")
	}
	if err := j.img.UnpremultiplyAlpha(); err != nil {
		return opError(err, "blurring")
	}
	return nil
}

// encode runs the pipeline and writes the output format without metadata.
func (j *job) encode() error {
	if err := j.img.RemoveMetadata(); err != nil {
		return opError(err, "removing metadata")
	}
	if j.out == imaging.JPEG && j.img.HasAlpha() {
		if err := j.img.Flatten(&govips.Color{R: 255, G: 255, B: 255}); err != nil {
			return opError(err, "flattening")
		}
	}
	q := j.opts.Quality
	if q == 0 {
		q = imaging.DefaultQuality
	}
	j.kill.track(j.img) // the image the encoder pulls its pixels from
	data, err := export(j.img, j.out, q)
	if err != nil {
		return encodeError(err, j.out)
	}
	if j.out == imaging.WebP {
		if data, err = stripWebP(data); err != nil {
			return coffer.Internal(err, "image transformation failed while encoding")
		}
	}
	j.data = data
	return nil
}

// avifEffort trades AVIF size for CPU (0 fastest .. 9 smallest; libvips' default is 4).
const avifEffort = 2

// export encodes img as f at quality q (ignored for PNG), with libvips' default
// effort for each format except AVIF.
func export(img *govips.ImageRef, f imaging.Format, q int) (data []byte, err error) {
	switch f {
	case imaging.JPEG:
		data, _, err = img.ExportJpeg(&govips.JpegExportParams{StripMetadata: true, Quality: q})
	case imaging.PNG:
		data, _, err = img.ExportPng(&govips.PngExportParams{StripMetadata: true, Compression: 6, Filter: govips.PngFilterNone})
	case imaging.WebP:
		data, _, err = img.ExportWebp(&govips.WebpExportParams{StripMetadata: true, Quality: q, ReductionEffort: 4})
	case imaging.AVIF:
		data, _, err = img.ExportAvif(&govips.AvifExportParams{StripMetadata: true, Quality: q, Bitdepth: 8, Effort: avifEffort})
	default:
		err = fmt.Errorf("no encoder for %q", f)
	}
	return data, err
}
