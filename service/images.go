package service

import (
	"context"
	"errors"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/blob"
	"github.com/coffer/coffer/imaging"
	"github.com/coffer/coffer/internal/timing"
)

// Variant is a transformed image, ready to send.
type Variant struct {
	Data       []byte
	MIME       string
	ETag       string // derived from the source's etag and the canonical parameters
	VaryAccept bool   // the format followed the Accept header
}

// Reader returns a reader of the variant's bytes, named key in its Attrs, that hands
// them out without copying (NextBytes) so a server can send them in one write.
func (v *Variant) Reader(key string) Reader { return blob.BytesReader(key, v.Data) }

// UseImages installs the image engine (before serving). Without one, transform
// requests answer ENOTIMPLEMENTED.
func (s *Service) UseImages(e imaging.Engine) { s.images = e }

// OpenVariant returns file id transformed by o, checking read access first (a file p
// may not read is ENOTFOUND, as for downloads). accept is the client's Accept header,
// which f=auto follows. Variants come from the variant cache when they can; otherwise
// the source is transformed on the bounded worker pool (EUNAVAILABLE when its queue
// is full: imaging.ErrBusy, logged here at most every 10 s as a warning, not per
// request).
func (s *Service) OpenVariant(ctx context.Context, p *coffer.Principal, id string, o imaging.Options, accept string) (*coffer.File, *coffer.Bucket, *Variant, error) {
	lastKey := ""
	for attempt := 1; ; attempt++ {
		f, b, v, err := s.openVariant(ctx, p, id, o, accept)
		var missing *blobMissing
		if !errors.As(err, &missing) {
			if errors.Is(err, imaging.ErrBusy) {
				s.shedRefused()
			}
			return f, b, v, err
		}
		if !retryMissing(missing.f.BlobKey, &lastKey, attempt) { // as in OpenFile
			return nil, nil, nil, s.missingBlob(missing.f, missing.err)
		}
		s.rowMayBeStale(id)
	}
}

// blobMissing is the error of a transformation whose source blob is not in the blob
// store.
type blobMissing struct {
	f   *coffer.File
	err error
}

func (e *blobMissing) Error() string { return "source blob missing: " + e.err.Error() }
func (e *blobMissing) Unwrap() error { return e.err }

// openVariant is one attempt of OpenVariant.
func (s *Service) openVariant(ctx context.Context, p *coffer.Principal, id string, o imaging.Options, accept string) (*coffer.File, *coffer.Bucket, *Variant, error) {
	f, b, err := s.GetFile(ctx, p, id)
	if err != nil {
		return nil, nil, nil, err
	}
	if s.images == nil {
		return nil, nil, nil, coffer.Errorf(coffer.ENOTIMPLEMENTED, "image transformations are not configured on this server")
	}
	if _, ok := imaging.FormatFromMIME(f.MimeType); !ok {
		return nil, nil, nil, coffer.Errorf(coffer.EUNSUPPORTED, "transformation parameters need an image file; this file is %s", f.MimeType)
	}
	o, vary := o.NegotiateFor(accept, f.MimeType, s.images.Supports)
	canonical := o.Canonical()
	start := time.Now()
	var steps atomic.Pointer[[]imaging.StepTiming] // the loader may run on another goroutine
	data, where, err := s.variants.Get(ctx, f.ID, f.ETag, canonical, func(ctx context.Context) ([]byte, error) {
		res, err := s.transform(ctx, f, o)
		if res == nil {
			return nil, err
		}
		steps.Store(&res.Steps)
		return res.Data, err
	})
	if st := steps.Load(); st != nil {
		where = stepsDesc(where, *st)
	}
	timing.FromContext(ctx).Add("transform", time.Since(start), where)
	if err != nil {
		return nil, nil, nil, err
	}
	return f, b, &Variant{Data: data, MIME: o.Format.MIME(), ETag: imaging.VariantTag(f.ETag, canonical), VaryAccept: vary}, nil
}

// stepsDesc adds the engine's steps that took 0.1 ms or more to the Server-Timing
// description of a transformation, e.g. "made: read 8.1ms, resize 60.2ms, encode 25.3ms".
func stepsDesc(where string, steps []imaging.StepTiming) string {
	b := []byte(where)
	sep := ": "
	for _, st := range steps {
		if st.Duration < 100*time.Microsecond {
			continue
		}
		b = append(b, sep...)
		b = append(b, st.Name...)
		b = append(b, ' ')
		b = strconv.AppendFloat(b, float64(st.Duration.Microseconds())/1000, 'f', 1, 64)
		b = append(b, "ms"...)
		sep = ", "
	}
	return string(b)
}

// transform reads f's contents and runs the engine on them, unless the contents
// are quarantined for crashing the engine.
func (s *Service) transform(ctx context.Context, f *coffer.File, o imaging.Options) (*imaging.Result, error) {
	if err := s.crashes.check(f.ETag); err != nil {
		return nil, err
	}
	r, _, err := s.content.Open(ctx, f.BlobKey, f.Size)
	if coffer.ErrorCode(err) == coffer.ENOTFOUND {
		return nil, &blobMissing{f: f, err: err}
	}
	if err != nil {
		return nil, err
	}
	defer r.Close()
	res, err := s.images.Transform(ctx, r, o)
	if err != nil {
		s.crashes.record(f.ETag, err)
		return nil, err
	}
	return res, nil
}

// forgetVariants drops a replaced or deleted file's variants.
func (s *Service) forgetVariants(ctx context.Context, id string) {
	s.variants.Forget(context.WithoutCancel(ctx), id)
}
