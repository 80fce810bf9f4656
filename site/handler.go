package site

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/internal/httpserve"
	"github.com/coffer/coffer/site/audit"
)

// DefaultMinCompressSize is the smallest object compressed by default.
const DefaultMinCompressSize = 1 << 10

// HandlerConfig configures a Handler.
type HandlerConfig struct {
	// Edge is the pull-through cache: upstream targets and derived (compressed)
	// copies. Nil: upstream targets answer 502 and nothing is compressed unless a
	// precompressed sibling exists.
	Edge Edge
	// Audit is given a record of every answer of a site whose Audit is not false
	// (nil: no audit). The record is reused after Audit returns: copy it, never
	// keep the pointer.
	Audit func(*audit.Record)
	Log   *slog.Logger     // nil: slog.Default()
	Now   func() time.Time // nil: time.Now
	// MinCompressSize is the smallest size compressed (0: DefaultMinCompressSize;
	// negative: never compress).
	MinCompressSize int64
	// AllowWrite, when set, is told the size of a body about to be sent, to give
	// its write the time that size needs (httpserve.Frame.AllowWrite: the write
	// timeout plus the size at the minimum write rate, as the fast path's SendPlan
	// allows).
	AllowWrite func(w http.ResponseWriter, r *http.Request, size int64)
}

// Handler serves sites' requests. Safe for concurrent use.
type Handler struct {
	cfg     HandlerConfig
	stats   sync.Map // scope → *Stats
	writers sync.Pool
	records sync.Pool
}

// NewHandler returns a Handler over cfg.
func NewHandler(cfg HandlerConfig) *Handler {
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.MinCompressSize == 0 {
		cfg.MinCompressSize = DefaultMinCompressSize
	}
	h := &Handler{cfg: cfg}
	h.writers.New = func() any { return new(countingWriter) }
	h.records.New = func() any { return new(audit.Record) }
	return h
}

// Request is what the app resolved about a site request before Serve.
type Request struct {
	Tenant string
	Site   *Compiled // required
	// Buckets opens the tenant's bucket files (nil: bucket targets answer 502).
	Buckets Buckets
	// Host is the normalized host the site was found by ("": r.Host).
	Host      string
	UserID    string
	Client    string // client address without port
	RequestID string
}

// exchange is one request being served.
type exchange struct {
	h      *Handler
	w      *countingWriter
	r      *http.Request
	req    Request
	path   string // the clean request path ("" until known)
	target string
	cache  CacheStatus
}

// Serve answers r for the site in req: GET and HEAD only, first matching route,
// then its target (see the package doc). It never answers 500 for an upstream's
// fault, and records the answer in the audit log and the site's stats.
func (h *Handler) Serve(w http.ResponseWriter, r *http.Request, req Request) {
	start := h.cfg.Now()
	cw := h.writers.Get().(*countingWriter)
	cw.reset(w)
	x := exchange{h: h, w: cw, r: r, req: req, cache: CacheBypass}
	x.serve()
	h.record(&x, start)
	cw.reset(nil)
	h.writers.Put(cw)
}

// serve runs the request to its answer.
func (x *exchange) serve() {
	r := x.r
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		x.w.Header().Set("Allow", "GET, HEAD")
		x.plain(http.StatusMethodNotAllowed, "method not allowed")
		return
	}
	p, err := RequestPath(r)
	if err != nil {
		x.plain(http.StatusBadRequest, "bad request path")
		return
	}
	x.path = p
	rt, key, ok := x.req.Site.Route(p)
	if !ok {
		x.notFound(nil)
		return
	}
	x.target = rt.Label
	switch {
	case rt.Target.Redirect != nil:
		x.redirect(rt)
	case key == "": // a directory, and the route has no index
		x.notFound(rt)
	default:
		x.serveKey(rt, p, docPath(p, rt), key)
	}
}

// serveKey answers with the object at key, or the route's fallbacks when it is
// missing.
func (x *exchange) serveKey(rt *CompiledRoute, p, doc, key string) {
	obj, err := x.h.open(x.r.Context(), x.req.Buckets, x.req.Site.Scope, rt, p, key)
	if err == nil {
		x.respond(rt, doc, p, key, obj, http.StatusOK)
		return
	}
	if coffer.ErrorCode(err) == coffer.ENOTFOUND {
		x.notFound(rt)
		return
	}
	x.failed(rt, err)
}

// docPath is the path of the document p is served from: p, with the route's
// index document appended to a directory path. Cache and header rules match it.
func docPath(p string, rt *CompiledRoute) string {
	if strings.HasSuffix(p, "/") {
		return p + rt.Index
	}
	if strings.TrimPrefix(p, rt.StripPrefix) == "" {
		return p + "/" + rt.Index
	}
	return p
}

// open opens key of the route's target: a bucket file of buckets (EINVALID for
// a key coffer.CleanName would not keep as it is: invisible or bidirectional
// characters, a name not in NFC), or an upstream object through the edge cache
// under scope and the request path p.
func (h *Handler) open(ctx context.Context, buckets Buckets, scope string, rt *CompiledRoute, p, key string) (*Object, error) {
	if b := rt.Route.Target.Bucket; b != nil {
		if buckets == nil {
			return nil, coffer.Errorf(coffer.EUNAVAILABLE, "site: no bucket source")
		}
		if c, err := coffer.CleanName(key); err != nil || c != key {
			return nil, coffer.Errorf(coffer.EINVALID, "site: %q is not a file name", key)
		}
		return buckets.Open(ctx, b.ID, key)
	}
	if h.cfg.Edge == nil {
		return nil, coffer.Errorf(coffer.EUNAVAILABLE, "site: no edge cache")
	}
	return h.cfg.Edge.Get(ctx, EdgeRequest{
		Scope: scope, Path: p, Key: key, Origin: rt.Origin, Policy: rt.Edge, Tags: rt.Tags,
	})
}

// notFound answers a missing path of route rt (nil: no route matched): the
// route's SPA fallback for a page-like GET or HEAD, served 200 from the same
// target; else the route's NotFound document from its own target, else the
// site's NotFound document (routed like a request), with status 404; else a
// plain 404.
func (x *exchange) notFound(rt *CompiledRoute) {
	if rt != nil && rt.Fallback != "" && pageLike(x.r, x.path) {
		if x.document(rt, rt.Fallback, http.StatusOK) {
			return
		}
	}
	if rt != nil && rt.NotFound != "" {
		if x.document(rt, rt.NotFound, http.StatusNotFound) {
			return
		}
	}
	if nf := x.req.Site.Site.NotFound; nf != "" {
		if r2, _, ok := x.req.Site.Route(nf); ok && r2.Target.Redirect == nil {
			if x.document(r2, nf, http.StatusNotFound) {
				return
			}
		}
	}
	x.plain(http.StatusNotFound, "not found")
}

// document serves the document at path doc of route rt with status, reporting
// whether it did (false: it is missing or failed, and nothing was written).
func (x *exchange) document(rt *CompiledRoute, doc string, status int) bool {
	key := rt.Key(doc)
	if key == "" {
		return false
	}
	obj, err := x.h.open(x.r.Context(), x.req.Buckets, x.req.Site.Scope, rt, doc, key)
	if err != nil {
		if coffer.ErrorCode(err) != coffer.ENOTFOUND {
			x.h.cfg.Log.Warn("site: error document", "scope", x.req.Site.Scope, "path", doc, "err", err)
		}
		return false
	}
	x.target = rt.Label
	x.respond(rt, doc, doc, key, obj, status)
	return true
}

// pageLike reports whether a request for p looks like a page navigation: no
// file extension in its last segment, or an Accept naming text/html.
func pageLike(r *http.Request, p string) bool {
	last := p[strings.LastIndexByte(p, '/')+1:]
	if !strings.Contains(last, ".") {
		return true
	}
	for _, a := range r.Header["Accept"] {
		if strings.Contains(a, "text/html") {
			return true
		}
	}
	return false
}

// redirect answers the redirect route rt: Location is To with ":splat" replaced
// by what followed the pattern's literal part, and the request's query kept.
func (x *exchange) redirect(rt *CompiledRoute) {
	to := rt.Route.Target.Redirect.To
	if strings.Contains(to, ":splat") {
		splat := (&url.URL{Path: rt.match.splat(x.path)}).EscapedPath()
		to = strings.ReplaceAll(to, ":splat", splat)
		if strings.HasPrefix(to, "/") {
			to = "/" + strings.TrimLeft(to, "/") // never a scheme-relative "//host"
		}
	}
	if q := x.r.URL.RawQuery; q != "" {
		sep := "?"
		if strings.Contains(to, "?") {
			sep = "&"
		}
		to += sep + q
	}
	status := rt.Route.Target.Redirect.Status
	if status == 0 {
		status = http.StatusMovedPermanently
	}
	var pl httpserve.Plan
	pl.Reset(status)
	routeHeaders(&pl, x.req.Site, rt, x.path)
	pl.Add("Location", to)
	pl.Size = 0
	_ = pl.Serve(x.w, x.r, 0)
}
