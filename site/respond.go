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

// xCacheValues are the X-Cache values of the cache statuses.
var xCacheValues = map[CacheStatus]string{
	CacheHit: "HIT", CacheMiss: "MISS", CacheStale: "STALE", CacheRevalidated: "REVALIDATED", CacheBypass: "BYPASS",
}

// respond writes obj (closing it) as the answer for the document doc of route
// rt, with status (200 or 404): the plan of the answer (plan), in the coding
// the request negotiates when the route compresses obj, written through
// net/http (httpserve.Plan.Serve: ranges and conditionals by
// http.ServeContent for a 200 of known size).
func (x *exchange) respond(rt *CompiledRoute, doc, p, key string, obj *Object, status int) {
	defer obj.Close()
	body, enc := obj, encIdentity
	vary, negotiable := x.h.coding(rt, obj)
	if negotiable && x.r.Header.Get("Range") == "" && x.r.Header.Get("If-Range") == "" {
		enc = negotiate(x.r.Header)
	}
	if enc != encIdentity {
		if c := x.h.compressed(x.r.Context(), x.req.Buckets, x.req.Site.Scope, rt, p, doc, key, obj, enc); c != nil {
			defer c.Close()
			body = c
		} else {
			enc = encIdentity
		}
	}
	var pl httpserve.Plan
	x.cache = plan(&pl, x.req.Site, rt, doc, obj, body, enc, vary, status)
	if body.Size >= 0 {
		x.allowWrite(body.Size)
	}
	if err := pl.Serve(x.w, x.r, maxRanges); err != nil && x.r.Context().Err() == nil {
		x.h.cfg.Log.Warn("site: body cut off", "scope", x.req.Site.Scope, "path", x.path, "err", err)
	}
}

// maxRanges is the most ranges one request gets (more: the whole object, 200), as
// the /v1 face's default: a Range of hundreds of tiny ranges would otherwise make a
// multipart answer many times the object's size.
const maxRanges = 16

// coding says whether an answer with obj from route rt varies with the request's
// Accept-Encoding (the route compresses obj's type and obj is not coded already),
// and whether a compressed coding may then be negotiated: not for an object of
// unknown size or smaller than MinCompressSize (nor, the caller checks, for a
// Range or If-Range request).
func (h *Handler) coding(rt *CompiledRoute, obj *Object) (vary, negotiable bool) {
	if obj.Encoding != "" || !rt.compres || !compressible(obj.Type) {
		return false, false
	}
	min := h.cfg.MinCompressSize
	return true, min >= 0 && obj.Size >= min
}

// plan fills pl with the answer of status (200 or 404) for the document doc of
// route rt of site c, the one both Serve and ServeFast write: obj is the object
// found, body what is sent (obj, or obj's copy in coding enc), vary whether the
// answer varies with Accept-Encoding. The fields: Content-Type (obj's, or a
// route's or header rule's), obj's validator, Cache-Control (a route's rule's,
// else obj's; no-cache for a 404), Surrogate-Key, X-Cache, the route's headers
// then the matching header rules' (a later value of a name replacing an earlier
// one), the sandbox CSP for a shared bucket's active content, Vary and
// Content-Encoding. It returns the answer's cache status.
func plan(pl *httpserve.Plan, c *Compiled, rt *CompiledRoute, doc string, obj, body *Object, enc encoding, vary bool, status int) CacheStatus {
	cache := obj.Cache
	if cache == "" {
		cache = CacheBypass
	}
	pl.Reset(status)
	pl.Name, pl.ModTime, pl.Body, pl.Size = doc, body.ModTime, body.Content, body.Size
	if obj.Type != "" {
		pl.Add("Content-Type", obj.Type)
	}
	if body.ETag != "" { // never the identity's validator on another encoding
		pl.Add("Etag", body.ETag)
	}
	switch cc := rt.cacheControl(doc); {
	case status != http.StatusOK:
		pl.Add("Cache-Control", "no-cache")
	case cc != "":
		pl.Add("Cache-Control", cc)
	case obj.CacheControl != "":
		pl.Add("Cache-Control", obj.CacheControl)
	}
	if sk := surrogateKey(rt, obj.Tags); sk != "" {
		pl.Add("Surrogate-Key", sk)
	}
	if v, ok := xCacheValues[cache]; ok {
		pl.Add("X-Cache", v)
	}
	routeHeaders(pl, c, rt, doc)
	if ct, _ := pl.Get("Content-Type"); rt.sandboxed(obj, ct) { // the type as sent, a route's included
		pl.Add("Content-Security-Policy", coffer.SandboxCSP)
	}
	if vary {
		pl.Add("Vary", "Accept-Encoding")
	}
	switch {
	case obj.Encoding != "":
		pl.Add("Content-Encoding", obj.Encoding)
	case enc != encIdentity:
		pl.Add("Content-Encoding", codingNames[enc])
	}
	return cache
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

// routeHeaders sets in pl the route's headers, then site c's header rules
// matching the document path doc.
func routeHeaders(pl *httpserve.Plan, c *Compiled, rt *CompiledRoute, doc string) {
	for _, kv := range rt.headers {
		pl.Set(kv[0], kv[1])
	}
	for _, rule := range c.headers {
		if rule.match.match(doc) {
			for _, kv := range rule.set {
				pl.Set(kv[0], kv[1])
			}
		}
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
