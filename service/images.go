package service

import (
	"context"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/cache"
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

// UseImages installs the image engine (before serving). Without one, transform
// requests answer ENOTIMPLEMENTED.
func (s *Service) UseImages(e imaging.Engine) { s.images = e }

// Variants returns the transformed-variant cache (for metrics).
func (s *Service) Variants() *cache.Variants { return s.variants }

// OpenVariant returns file id transformed by o, checking read access first (a file p
// may not read is ENOTFOUND, as for downloads). accept is the client's Accept header,
// which f=auto follows. Variants come from the variant cache when they can; otherwise
// the source is transformed on the bounded worker pool (EUNAVAILABLE when its queue
// is full).
func (s *Service) OpenVariant(ctx context.Context, p *coffer.Principal, id string, o imaging.Options, accept string) (*coffer.File, *coffer.Bucket, *Variant, error) {
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
	data, where, err := s.variants.Get(ctx, f.ID, f.ETag, canonical, func(ctx context.Context) ([]byte, error) {
		return s.transform(ctx, f, o)
	})
	timing.FromContext(ctx).Add("transform", time.Since(start), where)
	if err != nil {
		return nil, nil, nil, err
	}
	return f, b, &Variant{Data: data, MIME: o.Format.MIME(), ETag: cache.VariantTag(f.ETag, canonical), VaryAccept: vary}, nil
}

// transform reads f's contents and runs the engine on them.
func (s *Service) transform(ctx context.Context, f *coffer.File, o imaging.Options) ([]byte, error) {
	r, _, err := s.content.Open(ctx, f.BlobKey, f.Size)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	res, err := s.images.Transform(ctx, r, o)
	if err != nil {
		return nil, err
	}
	return res.Data, nil
}

// forgetVariants drops a replaced or deleted file's variants.
func (s *Service) forgetVariants(ctx context.Context, id string) {
	s.variants.Forget(context.WithoutCancel(ctx), id)
}
