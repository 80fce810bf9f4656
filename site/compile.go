package site

import (
	"net/http"
	"sort"
	"strings"
	"sync/atomic"

	"github.com/coffer/coffer"
)

// OriginFactory makes the upstream origins of a site's routes (the app
// implements it with package edge). S3 opens the origin's sealed secret key
// (OpenSecretAccessKey) for tenantID.
type OriginFactory interface {
	HTTP(o HTTPOrigin) (Origin, error)
	S3(o S3Origin, tenantID string) (Origin, error)
}

// Compiled is a validated site ready to serve: its routes' matchers, origins
// and header and cache rules. Safe for concurrent use; a changed site is
// compiled anew.
type Compiled struct {
	Site *Document
	// Tenant is the site's tenant; Scope is "<tenant>/<site id>", the edge
	// cache's purge unit.
	Tenant string
	Scope  string
	Routes []*CompiledRoute
	// audit is the site's Audit setting (default on).
	audit   bool
	headers []compiledHeaderRule
	stats   atomic.Pointer[Stats]
}

// CompiledRoute is a route ready to serve.
type CompiledRoute struct {
	*Route
	// Index is the route's index document ("" for none).
	Index   string
	Origin  Origin // for HTTP and S3 targets
	Label   string // the target as the audit log names it: "bucket:<id>", "http:<url>", "s3:<bucket>", "redirect"
	match   *pattern
	prefix  string // the bucket or S3 target's key prefix
	compres bool
	// trusted: a bucket target whose writers are all trusted (BucketTarget.Trusted);
	// siblings: precompressed siblings are looked up (bucket and S3 targets, HTTP
	// origins that say Precompressed).
	trusted, siblings bool
	cache             []compiledCacheRule
	headers           [][2]string // canonical name, value; sorted by name
}

// compiledCacheRule is a CacheRule with its pattern.
type compiledCacheRule struct {
	match *pattern
	value string
}

// compiledHeaderRule is a HeaderRule with its pattern.
type compiledHeaderRule struct {
	match *pattern
	set   [][2]string
}

// Compile validates s and compiles it for tenantID, making its origins with
// origins (nil only for a site without upstream targets). Returns EINVALID.
func Compile(s *Document, tenantID string, origins OriginFactory) (*Compiled, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	c := &Compiled{Site: s, Tenant: tenantID, Scope: tenantID + "/" + s.ID, audit: s.Audit == nil || *s.Audit}
	for i := range s.Routes {
		r, err := compileRoute(&s.Routes[i], tenantID, origins)
		if err != nil {
			return nil, err
		}
		c.Routes = append(c.Routes, r)
	}
	for _, h := range s.Headers {
		m, _ := parseMatch(h.Match) // validated
		c.headers = append(c.headers, compiledHeaderRule{match: m, set: sortedHeaders(h.Set)})
	}
	return c, nil
}

// compileRoute compiles one validated route.
func compileRoute(r *Route, tenantID string, origins OriginFactory) (*CompiledRoute, error) {
	m, _ := parsePattern(r.Path) // validated
	cr := &CompiledRoute{Route: r, Index: r.Index, match: m, compres: r.Compress == nil || *r.Compress}
	if cr.Index == "" {
		cr.Index = "index.html"
	} else if cr.Index == "-" {
		cr.Index = ""
	}
	var err error
	t := r.Target
	switch {
	case t.Bucket != nil:
		cr.Label, cr.prefix = "bucket:"+t.Bucket.ID, t.Bucket.Prefix
		cr.trusted, cr.siblings = t.Bucket.Trusted, true
	case t.Redirect != nil:
		cr.Label = "redirect"
	case origins == nil:
		return nil, coffer.Errorf(coffer.EINVALID, "site: upstream targets need an origin factory")
	case t.HTTP != nil:
		cr.Label, cr.siblings = "http:"+t.HTTP.URL, t.HTTP.Precompressed
		cr.Origin, err = origins.HTTP(*t.HTTP)
	case t.S3 != nil:
		cr.Label, cr.prefix, cr.siblings = "s3:"+t.S3.Bucket, t.S3.Prefix, true
		cr.Origin, err = origins.S3(*t.S3, tenantID)
	}
	if err != nil {
		return nil, err
	}
	for _, c := range r.CacheControl {
		cm, _ := parseMatch(c.Match) // validated
		cr.cache = append(cr.cache, compiledCacheRule{match: cm, value: c.Value})
	}
	cr.headers = sortedHeaders(r.Headers)
	return cr, nil
}

// sortedHeaders returns h as canonical name/value pairs sorted by name.
func sortedHeaders(h map[string]string) [][2]string {
	out := make([][2]string, 0, len(h))
	for k, v := range h {
		out = append(out, [2]string{http.CanonicalHeaderKey(k), v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] })
	return out
}

// Route returns the first route matching the clean path p (see CleanPath) and
// the key its target serves p from: the target's prefix, then p without the
// route's StripPrefix and without its leading "/"; a path ending in "/" gets the
// route's index document, and has no key ("" and ok) when the index is off.
// For a redirect route the key is "".
func (c *Compiled) Route(p string) (r *CompiledRoute, key string, ok bool) {
	for _, r := range c.Routes {
		if r.match.match(p) {
			return r, r.Key(p), true
		}
	}
	return nil, "", false
}

// Key maps the clean path p to the route's target key ("" for none).
func (r *CompiledRoute) Key(p string) string {
	if r.Label == "redirect" {
		return ""
	}
	rest := strings.TrimPrefix(p, r.StripPrefix)
	rest = strings.TrimLeft(rest, "/")
	if rest == "" || strings.HasSuffix(p, "/") {
		if r.Index == "" {
			return ""
		}
		rest += r.Index
	}
	return r.prefix + rest
}

// sibling reports whether sib, the precompressed sibling in coding enc of obj, may
// answer for obj: its coding is enc's (or none: a file of its own), and unless the
// route's bucket is trusted, roles other than the admin cannot write the bucket, or
// the same user uploaded both (a user's sibling never answers for the admin's page
// or another user's). The fast path and Serve both ask it.
func (r *CompiledRoute) sibling(obj, sib *Object, enc encoding) bool {
	if sib.Encoding != "" && sib.Encoding != codingNames[enc] {
		return false
	}
	return r.trusted || !obj.Shared && !sib.Shared || sib.Uploader != "" && sib.Uploader == obj.Uploader
}

// sandboxed reports whether the answer of obj, sent as Content-Type ct, gets
// coffer.SandboxCSP: a file of a bucket roles other than the admin may write, of
// a type that is not passive, unless the route's bucket is trusted.
func (r *CompiledRoute) sandboxed(obj *Object, ct string) bool {
	return obj.Shared && !r.trusted && !coffer.PassiveType(ct)
}

// cacheControl returns the first matching rule's value for the served path p.
func (r *CompiledRoute) cacheControl(p string) string {
	for _, c := range r.cache {
		if c.match.match(p) {
			return c.value
		}
	}
	return ""
}
