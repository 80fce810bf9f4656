package site

import (
	"bytes"
	"context"
	"net/http"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/internal/httpserve"
)

// The HTTP/1.1 fast path of sites (httpserve.FastServer). Once a site's cache is
// warm nearly every request is a plain GET of a fresh copy: the fast path answers
// those on the connection's own goroutine with one header write and sendfile,
// without net/http's request, header maps, background reader, per-connection
// buffers and the 32 KB copy buffer its ReadFrom holds during every sendfile (the
// memory that made a site at 3,000 connections cost ~290 MB, docs/benchmarks/compare-sites.md "Sites against
// nginx"). Everything else it declines before writing a byte, having started
// nothing (FastEdge peeks only), and Serve answers it through net/http.

// fastSlowHeaders are the request headers that make Serve's answer depend on more
// than the object (ranges and the conditions http.ServeContent evaluates):
// requests with one are declined.
var fastSlowHeaders = [...]string{"Range", "If-Range", "If-Match", "If-None-Match", "If-Modified-Since", "If-Unmodified-Since"}

// ServeFast answers fr, a request for the site in req, on the fast path and
// returns true, or returns false having written nothing and started nothing. It
// answers a GET or HEAD without Range or conditional headers, of a path without
// percent-encoding, whose route serves an object that is at hand: an upstream
// object's fresh copy in the edge cache, or a bucket's file; in the coding the
// request negotiates when that coding is at hand too (the object's own, a
// precompressed sibling found or known missing, a compressed copy the cache
// holds). The answer is Serve's plan (plan), written by the fast writer
// (httpserve.Frame.SendPlan: metrics, access log, write timeout) under the route
// "site" when it writes it as net/http would (httpserve.Plan.Fast), and counted
// in the stats and audit log as Serve counts it. Redirects, fallbacks, 404s,
// misses, stale copies and errors are Serve's.
func (h *Handler) ServeFast(f *httpserve.Frame, st *httpserve.FastState, fr *httpserve.FastRequest, w *httpserve.FastWriter, req Request) bool {
	if fr.Has(fastSlowHeaders[:]...) {
		return false
	}
	p, ok := fastRequestPath(fr.Path)
	if !ok {
		return false
	}
	rt, key, ok := req.Site.Route(p)
	if !ok || rt.Target.Redirect != nil || key == "" {
		return false
	}
	doc := docPath(p, rt)
	fe, _ := h.cfg.Edge.(FastEdge)
	var peeks peekCount
	obj, state := h.peek(st, fe, req.Buckets, req.Site.Scope, rt, p, key, &peeks)
	if state != peekFound {
		return false
	}
	defer obj.Close()
	body, enc := obj, encIdentity
	vary, negotiable := h.coding(rt, obj)
	if negotiable {
		var lines [4]string
		enc = negotiateLines(fr.Values("Accept-Encoding", lines[:0]))
	}
	if enc != encIdentity {
		c, ok := h.peekCompressed(st, fe, req.Buckets, req.Site.Scope, rt, p, doc, key, obj, enc, &peeks)
		if !ok {
			return false
		}
		if c != nil {
			defer c.Close()
			body = c
		} else {
			enc = encIdentity
		}
	}
	var pl httpserve.Plan
	cache := plan(&pl, req.Site, rt, doc, obj, body, enc, vary, http.StatusOK)
	if !pl.Fast() {
		return false
	}
	f.SendPlan(st, "site", fr, w, &pl)
	if fe != nil {
		fe.CountPeeks(peeks.hits, peeks.negatives)
	}
	h.count(&req, &outcome{method: fr.Method, host: req.Host, path: p, target: rt.Label,
		status: w.Status, bytes: w.Bytes, cache: cache}, fr.Start)
	return true
}

// fastRequestPath is the clean path (RequestPath's) of the request target raw, up to
// its query, when the fast path can tell it from raw alone: no percent-encoding,
// so that net/http's decoded path is raw itself.
func fastRequestPath(raw []byte) (string, bool) {
	if len(raw) == 0 || raw[0] != '/' || len(raw) > MaxPathLen || bytes.IndexByte(raw, '%') >= 0 {
		return "", false
	}
	p, err := CleanPath(string(raw))
	return p, err == nil
}

// peekState is what a peek found out about an object.
type peekState uint8

const (
	peekUnknown peekState = iota // only open (Get) can tell: the fast path declines
	peekFound
	peekMissing // the target has no such object (ENOTFOUND, or a negative entry)
)

// peekCount counts the edge hits and negative hits of a fast answer's peeks, for
// CountPeeks once it is served.
type peekCount struct{ hits, negatives int }

// peek is open without side effects on what is served: an upstream object only
// from the edge cache's fresh copies (Peek: nothing started, nothing counted), a
// bucket's file through Buckets as Serve opens it (reads, which may fill the name
// and content caches and count in their hit ratios). When the fast path then
// declines a bucket file (no type, a sibling that fails, a compressed copy not
// made yet), Serve opens it again: two reads of the caches, once per request for
// as long as no copy can be made (a compressible file over --edge-max-object).
func (h *Handler) peek(ctx context.Context, fe FastEdge, buckets Buckets, scope string, rt *CompiledRoute, p, key string, n *peekCount) (*Object, peekState) {
	if rt.Route.Target.Bucket != nil {
		obj, err := h.open(ctx, buckets, scope, rt, p, key)
		switch {
		case err == nil:
			return obj, peekFound
		case coffer.ErrorCode(err) == coffer.ENOTFOUND:
			return nil, peekMissing
		}
		return nil, peekUnknown
	}
	if fe == nil {
		return nil, peekUnknown
	}
	obj, missing := fe.Peek(EdgeRequest{Scope: scope, Path: p, Key: key, Origin: rt.Origin, Policy: rt.Edge, Tags: rt.Tags})
	switch {
	case obj != nil:
		n.hits++
		return obj, peekFound
	case missing:
		n.negatives++
		return nil, peekMissing
	}
	return nil, peekUnknown
}

// peekCompressed is compressed without side effects: ok false when only
// compressed can tell (a sibling not known either way, a compressed copy not made
// yet); else the coded object, or nil for identity.
func (h *Handler) peekCompressed(ctx context.Context, fe FastEdge, buckets Buckets, scope string, rt *CompiledRoute, p, doc, key string,
	obj *Object, enc encoding, n *peekCount) (*Object, bool) {
	if rt.siblings {
		sib, state := h.peek(ctx, fe, buckets, scope, rt, doc+suffixes[enc], key+suffixes[enc], n)
		if state == peekUnknown {
			return nil, false
		}
		if sib != nil && rt.sibling(obj, sib, enc) {
			sib.ETag = variantETag(cmpOr(sib.ETag, obj.ETag), enc)
			return sib, true
		}
		if sib != nil {
			sib.Close()
		}
	}
	src := sourceVersion(obj)
	if h.cfg.Edge == nil || src == "" {
		return nil, true
	}
	if fe == nil {
		return nil, false
	}
	d := fe.PeekDerived(DerivedRequest{Scope: scope, Path: p, Variant: codingNames[enc], SourceETag: src, Tags: rt.Tags, Type: obj.Type})
	if d == nil {
		return nil, false
	}
	n.hits++
	d.ETag = variantETag(src, enc)
	return d, true
}
