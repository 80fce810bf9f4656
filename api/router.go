// Package api composes coffer's faces (the APIs it speaks: hasura-storage's /v1
// today, later tus, S3, the console) on one port. Each face is a package under api/
// with its own routes, credentials and error bodies, serving its requests in its own
// httpserve.Frame (request ids, logs, metrics, recovery, deadlines); Router only
// chooses the face by path.
//
// Adding a face is a new package under api/ whose handler has a Prefixes method (it
// is a Face), and one argument more where app builds the router (buildHTTP in
// app/serve.go):
//
//	router, err := api.New(hasuraFace, tusFace)
//
// With --tenants, app's tenant router sits in front: it resolves the request's tenant
// from its host and hands it to that tenant's own *Router (faces built over the
// tenant's service and credentials), calling Router.ServeFast the same way for the
// HTTP/1.1 fast path; Router itself knows no tenant. A request the tenant router
// refuses (unknown host, suspended tenant, rate limit) is answered by Router.Refuse
// in the protocol of the face its path belongs to: each face is a Refuser.
package api

import (
	"net/http"
	"sort"
	"strings"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/internal/httpserve"
)

// Face is one API on the shared port: a handler and the path prefixes it answers.
// A prefix ending in "/" claims every path under it ("/v1/"); any other prefix
// claims that exact path ("/healthz"), and so does the root "/" (claiming every
// path would take them all from the fallback).
type Face interface {
	http.Handler
	Prefixes() []string
}

// Refuser is a face that answers, in its own protocol, a request refused in front of
// it (by the tenant router: an unknown host, a suspended tenant, a rate limit):
// err is a coffer error whose kind gives the status or code and whose message is
// client-safe. Headers already set on w (Retry-After) are kept.
type Refuser interface {
	Refuse(w http.ResponseWriter, r *http.Request, err error)
}

// Router dispatches each request to the face with the longest prefix matching its
// path, and every path no face claims to the fallback face, so that their answers
// (a 404 in the fallback's own error body) are the fallback's. It allocates nothing
// per request. Paths are matched as sent: a face whose routes are a ServeMux
// redirects an unclean path ("/v1/../x") to its clean form, which is routed again.
type Router struct {
	routes   []route // longest prefix first
	fallback http.Handler
	prefixes []string // every face's, for Prefixes
}

// route is one prefix of a face.
type route struct {
	prefix  string
	subtree bool // the prefix ends in "/": it claims the paths under it
	face    http.Handler
}

var (
	_ Face    = (*Router)(nil)
	_ Refuser = (*Router)(nil)
)

// New returns the router of fallback, which also answers the paths no face claims,
// and faces. It returns EINVALID if a prefix does not begin with "/" or two faces
// claim the same one.
func New(fallback Face, faces ...Face) (*Router, error) {
	if fallback == nil {
		return nil, coffer.Errorf(coffer.EINVALID, "the router needs a fallback face")
	}
	rt := &Router{fallback: fallback}
	seen := map[string]bool{}
	for _, f := range append([]Face{fallback}, faces...) {
		for _, p := range f.Prefixes() {
			if !strings.HasPrefix(p, "/") {
				return nil, coffer.Errorf(coffer.EINVALID, "face prefix %q must begin with /", p)
			}
			if seen[p] {
				return nil, coffer.Errorf(coffer.EINVALID, "two faces claim the prefix %q", p)
			}
			seen[p] = true
			rt.routes = append(rt.routes, route{prefix: p, subtree: strings.HasSuffix(p, "/") && p != "/", face: f})
			rt.prefixes = append(rt.prefixes, p)
		}
	}
	sort.SliceStable(rt.routes, func(i, j int) bool { return len(rt.routes[i].prefix) > len(rt.routes[j].prefix) })
	return rt, nil
}

// ServeHTTP serves r with the face its path belongs to.
func (rt *Router) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rt.Face(r.URL.Path).ServeHTTP(w, r)
}

// Face returns the handler of the face that path belongs to: the one with the
// longest prefix claiming it, else the fallback.
func (rt *Router) Face(path string) http.Handler { return faceOf(rt, path) }

// Refuse answers r, refused before any face saw it, in the protocol of the face its
// path belongs to (RefuseAt).
func (rt *Router) Refuse(w http.ResponseWriter, r *http.Request, err error) {
	rt.RefuseAt(w, r, r.URL.Path, err)
}

// RefuseAt is Refuse with the face chosen by path (r's path past a tenant's path
// prefix): that face's Refuse, else the fallback's, else plain text.
func (rt *Router) RefuseAt(w http.ResponseWriter, r *http.Request, path string, err error) {
	if f, ok := faceOf(rt, path).(Refuser); ok {
		f.Refuse(w, r, err)
		return
	}
	if f, ok := rt.fallback.(Refuser); ok {
		f.Refuse(w, r, err)
		return
	}
	http.Error(w, coffer.ErrorMessage(err), httpserve.StatusOf(err))
}

// ServeFast hands a request on the HTTP/1.1 fast path to the face its path belongs
// to if that face has a fast path (an httpserve.FastHandler); false (declined)
// otherwise.
func (rt *Router) ServeFast(req *httpserve.FastRequest, w *httpserve.FastWriter) bool {
	fh, ok := faceOf(rt, req.Path).(httpserve.FastHandler)
	return ok && fh.ServeFast(req, w)
}

// faceOf is Face for a path as a string or as bytes (without converting them).
func faceOf[P string | []byte](rt *Router, path P) http.Handler {
	for i := range rt.routes {
		rte := &rt.routes[i]
		n := len(rte.prefix)
		if len(path) >= n && string(path[:n]) == rte.prefix && (rte.subtree || len(path) == n) {
			return rte.face
		}
	}
	return rt.fallback
}

// Prefixes returns every prefix the router's faces claim, so that a router can be
// a face of another (a tenant's router inside a tenant-aware one, or tests adding a
// face to coffer's own).
func (rt *Router) Prefixes() []string { return rt.prefixes }
