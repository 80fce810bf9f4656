package site

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/internal/httpserve"
)

// Shared one-value header slices (cap 1, so an Add copies instead of writing
// into them).
var (
	varyAcceptEncoding = []string{"Accept-Encoding"}[:1:1]
	noCache            = []string{"no-cache"}[:1:1]
	xCacheValues       = map[CacheStatus][]string{
		CacheHit: {"HIT"}, CacheMiss: {"MISS"}, CacheStale: {"STALE"},
		CacheRevalidated: {"REVALIDATED"}, CacheBypass: {"BYPASS"},
	}
	encodingValues = [numEncodings][]string{nil, {"br"}, {"zstd"}, {"gzip"}}
)

// respond writes obj (closing it) as the answer for the document doc of route
// rt, with status (200 or 404): headers from the object and the route's rules,
// compression when it fits, then the body through http.ServeContent (ranges,
// conditionals) when its size is known and status is 200.
func (x *exchange) respond(rt *CompiledRoute, doc, p, key string, obj *Object, status int) {
	h := x.w.Header()
	if obj.Cache != "" {
		x.cache = obj.Cache
	}
	if obj.Type != "" {
		h["Content-Type"] = []string{obj.Type}
	}
	x.objectHeaders(rt, doc, obj, status)
	x.routeHeaders(rt, doc)
	if rt.sandboxed(obj, h.Get("Content-Type")) { // the type as sent, a route's included
		h.Add("Content-Security-Policy", coffer.SandboxCSP)
	}
	if obj.Encoding != "" {
		h.Set("Content-Encoding", obj.Encoding)
	} else if rt.compres && compressible(obj.Type) {
		if v := h["Vary"]; v == nil {
			h["Vary"] = varyAcceptEncoding
		} else {
			h["Vary"] = append(v, varyAcceptEncoding...)
		}
		if enc := x.encodingFor(obj); enc != encIdentity {
			if c := x.h.compressed(x.r.Context(), x.req.Buckets, x.req.Site.Scope, rt, p, doc, key, obj, enc); c != nil {
				obj.Close()
				obj = c
				h["Content-Encoding"] = encodingValues[enc]
				if obj.ETag != "" {
					h["Etag"] = []string{obj.ETag}
				} else {
					delete(h, "Etag") // never the identity's validator on another encoding
				}
			}
		}
	}
	defer obj.Close()
	if status == http.StatusOK && obj.Size >= 0 {
		if h["Content-Encoding"] != nil { // ServeContent leaves it out then (a Range answer gets its own)
			h.Set("Content-Length", strconv.FormatInt(obj.Size, 10))
		}
		httpserve.ApplyRange(x.r, obj.Size, maxRanges)
		x.allowWrite(obj.Size)
		http.ServeContent(x.w, x.r, doc, obj.ModTime, obj.Content)
		return
	}
	x.copyBody(obj, status)
}

// maxRanges is the most ranges one request gets (more: the whole object, 200), as
// the /v1 face's default: a Range of hundreds of tiny ranges would otherwise make a
// multipart answer many times the object's size.
const maxRanges = 16

// objectHeaders sets the object's validators, Cache-Control, Surrogate-Key and
// X-Cache.
func (x *exchange) objectHeaders(rt *CompiledRoute, doc string, obj *Object, status int) {
	h := x.w.Header()
	if obj.ETag != "" {
		h["Etag"] = []string{obj.ETag}
	}
	switch cc := rt.cacheControl(doc); {
	case status != http.StatusOK:
		h["Cache-Control"] = noCache
	case cc != "":
		h["Cache-Control"] = []string{cc}
	case obj.CacheControl != "":
		h["Cache-Control"] = []string{obj.CacheControl}
	}
	if sk := surrogateKey(rt, obj.Tags); sk != "" {
		h["Surrogate-Key"] = []string{sk}
	}
	if v, ok := xCacheValues[x.cache]; ok {
		h["X-Cache"] = v[:1:1]
	}
}

// surrogateKey is the route's tags and the object's, space-separated, each once.
func surrogateKey(rt *CompiledRoute, tags []string) string {
	if len(tags) == 0 {
		return strings.Join(rt.Tags, " ")
	}
	var b strings.Builder
	seen := make(map[string]bool, len(rt.Tags)+len(tags))
	for _, list := range [2][]string{rt.Tags, tags} {
		for _, t := range list {
			if seen[t] || !validTag(t) {
				continue
			}
			seen[t] = true
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(t)
		}
	}
	return b.String()
}

// routeHeaders sets the route's headers, then the site's header rules matching
// the document path doc.
func (x *exchange) routeHeaders(rt *CompiledRoute, doc string) {
	h := x.w.Header()
	for _, kv := range rt.headers {
		h[kv[0]] = []string{kv[1]}
	}
	for _, rule := range x.req.Site.headers {
		if rule.match.match(doc) {
			for _, kv := range rule.set {
				h[kv[0]] = []string{kv[1]}
			}
		}
	}
}

// encodingFor negotiates the coding for obj: identity for a Range or If-Range
// request, an object of unknown size or smaller than MinCompressSize.
func (x *exchange) encodingFor(obj *Object) encoding {
	min := x.h.cfg.MinCompressSize
	if min < 0 || obj.Size < min || x.r.Header.Get("Range") != "" || x.r.Header.Get("If-Range") != "" {
		return encIdentity
	}
	return negotiate(x.r.Header)
}

// copyBody writes status and obj's body as it is (no ranges): error documents,
// and objects of unknown size.
func (x *exchange) copyBody(obj *Object, status int) {
	h := x.w.Header()
	if obj.Size >= 0 {
		h.Set("Content-Length", strconv.FormatInt(obj.Size, 10))
		x.allowWrite(obj.Size)
	}
	if !obj.ModTime.IsZero() {
		h.Set("Last-Modified", obj.ModTime.UTC().Format(http.TimeFormat))
	}
	x.w.WriteHeader(status)
	if x.r.Method == http.MethodHead {
		return
	}
	if _, err := io.Copy(x.w, obj.Content); err != nil && x.r.Context().Err() == nil {
		x.h.cfg.Log.Warn("site: body cut off", "scope", x.req.Site.Scope, "path", x.path, "err", err)
	}
}

// allowWrite gives the answer's body of size bytes its write time (HandlerConfig.AllowWrite).
func (x *exchange) allowWrite(size int64) {
	if x.h.cfg.AllowWrite != nil && x.r.Method != http.MethodHead {
		x.h.cfg.AllowWrite(x.w, x.r, size)
	}
}

// plain writes a short text answer.
func (x *exchange) plain(status int, msg string) {
	h := x.w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Length", strconv.Itoa(len(msg)+1))
	x.w.WriteHeader(status)
	if x.r.Method != http.MethodHead {
		io.WriteString(x.w, msg+"\n")
	}
}

// failed answers a target's failure other than ENOTFOUND: 400 for EINVALID, 504
// for a timeout, 502 for any other failure of an upstream (HTTP, S3) target, and
// for a bucket the status of the error's kind (500 for an internal error,
// logged with the request id).
func (x *exchange) failed(rt *CompiledRoute, err error) {
	code := coffer.ErrorCode(err)
	upstream := rt.Route.Target.Bucket == nil
	switch {
	case code == coffer.EINVALID:
		x.plain(http.StatusBadRequest, "bad request")
	case isTimeout(err):
		x.plain(http.StatusGatewayTimeout, "upstream timed out")
	case upstream || code == coffer.EUNAVAILABLE:
		x.h.cfg.Log.Warn("site: upstream failed", "scope", x.req.Site.Scope, "target", rt.Label, "err", err)
		x.plain(http.StatusBadGateway, "bad gateway")
	case code == coffer.EFORBIDDEN || code == coffer.EUNAUTHORIZED:
		x.plain(http.StatusForbidden, "forbidden")
	case code == coffer.ETOOMANY:
		x.plain(http.StatusTooManyRequests, "too many requests")
	default:
		x.h.cfg.Log.Error("site: bucket failed", "scope", x.req.Site.Scope, "request_id", x.req.RequestID, "err", err)
		x.plain(http.StatusInternalServerError, "internal error (request "+x.req.RequestID+")")
	}
}

// isTimeout reports whether err is a deadline or network timeout.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout()
}
