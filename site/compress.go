package site

import (
	"context"
	"io"
	"strconv"
	"strings"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/coffer/coffer"
)

// Compression levels. A copy is made once per object version and then served
// from the edge cache many times, so the levels lean to size, short of the
// slowest settings (brotli 10-11 take several times longer for a few percent):
// see docs/benchmarks/go-benchmarks.md for the measured ratio and time.
const (
	brotliLevel = 9
	zstdLevel   = zstd.SpeedBestCompression
	gzipLevel   = gzip.BestCompression
)

// compressed returns obj in coding enc: a precompressed sibling (key + ".br",
// ".zst" or ".gz") of the same target when the route looks them up and there is
// one it accepts (CompiledRoute.sibling; at edge path doc plus the same suffix, doc
// being the document's path), else a copy derived through
// the edge cache under the request path p (made once per source version). nil: none to be had;
// the caller answers with identity.
func (h *Handler) compressed(ctx context.Context, buckets Buckets, scope string, rt *CompiledRoute, p, doc, key string, obj *Object, enc encoding) *Object {
	if rt.siblings {
		sib, err := h.open(ctx, buckets, scope, rt, doc+suffixes[enc], key+suffixes[enc])
		if err == nil && rt.sibling(obj, sib, enc) {
			sib.ETag = variantETag(cmpOr(sib.ETag, obj.ETag), enc)
			return sib
		}
		if err == nil {
			sib.Close()
		}
	}
	src := sourceVersion(obj)
	if h.cfg.Edge == nil || src == "" {
		return nil
	}
	d, err := h.cfg.Edge.Derived(ctx, DerivedRequest{
		Scope: scope, Path: p, Variant: codingNames[enc], SourceETag: src, Tags: rt.Tags, Type: obj.Type,
		Make: h.maker(buckets, scope, rt, p, key, src, enc),
	})
	if err != nil {
		h.cfg.Log.Warn("site: compressing", "scope", scope, "path", p, "coding", codingNames[enc], "err", err)
		return nil
	}
	d.ETag = variantETag(src, enc)
	return d
}

// maker returns the Make of a derived copy: it opens the object again and
// compresses it, refusing (EABORTED) if it is no longer version src.
func (h *Handler) maker(buckets Buckets, scope string, rt *CompiledRoute, p, key, src string, enc encoding) func(context.Context, io.Writer) error {
	return func(ctx context.Context, w io.Writer) error {
		obj, err := h.open(ctx, buckets, scope, rt, p, key)
		if err != nil {
			return err
		}
		defer obj.Close()
		if sourceVersion(obj) != src {
			return coffer.Errorf(coffer.EABORTED, "site: %s changed while it was compressed", p)
		}
		return encode(w, obj.Content, enc)
	}
}

// sourceVersion names the version of obj a derived copy is made from: its ETag,
// else its modification time and size; "" when it has neither (not compressed).
func sourceVersion(obj *Object) string {
	if obj.ETag != "" {
		return obj.ETag
	}
	if obj.ModTime.IsZero() {
		return ""
	}
	return `W/"` + strconv.FormatInt(obj.ModTime.UnixNano(), 36) + "-" + strconv.FormatInt(obj.Size, 36) + `"`
}

// variantETag is the entity tag of the enc coding of the version etag: the
// same tag with "-br", "-zstd" or "-gzip" inside its quotes, so no cache
// mixes encodings.
func variantETag(etag string, enc encoding) string {
	if etag == "" {
		return ""
	}
	weak := strings.HasPrefix(etag, "W/")
	opaque := strings.Trim(strings.TrimPrefix(etag, "W/"), `"`)
	tag := `"` + opaque + "-" + codingNames[enc] + `"`
	if weak {
		return "W/" + tag
	}
	return tag
}

// cmpOr returns a unless it is empty, else b.
func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// encode compresses r into w with coding enc.
func encode(w io.Writer, r io.Reader, enc encoding) error {
	var zw io.WriteCloser
	switch enc {
	case encBrotli:
		zw = brotli.NewWriterLevel(w, brotliLevel)
	case encZstd:
		z, err := zstd.NewWriter(w, zstd.WithEncoderLevel(zstdLevel), zstd.WithEncoderConcurrency(1))
		if err != nil {
			return coffer.Internal(err, "zstd encoder")
		}
		zw = z
	case encGzip:
		z, err := gzip.NewWriterLevel(w, gzipLevel)
		if err != nil {
			return coffer.Internal(err, "gzip encoder")
		}
		zw = z
	default:
		return coffer.Errorf(coffer.EINVALID, "site: no encoder for coding %d", enc)
	}
	if _, err := io.Copy(zw, r); err != nil {
		zw.Close()
		return err
	}
	return zw.Close()
}
