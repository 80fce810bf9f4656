package tenancy

import (
	"io"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/internal/httpserve"
	"github.com/coffer/coffer/tenant"
)

// Faces is a tenant's faces as the router uses them (api.Router): they answer its
// requests, on net/http's path and on the fast path, and write its refusals, each
// in the protocol of the face of path.
type Faces interface {
	http.Handler
	httpserve.FastHandler
	RefuseAt(w http.ResponseWriter, r *http.Request, path string, err error)
}

// healthPath is the node's health check, answered for any host.
const healthPath = "/healthz"

// Router is the API port's handler with --tenants: it resolves the tenant of each
// request and hands it to that tenant's faces. What it refuses (an unknown host, a
// tenant not served, a rate limit) the face of the request's path answers, in its
// own protocol (Faces.RefuseAt): hasura JSON on /v1, a Connect or gRPC status on
// the RPC face.
type Router struct {
	rt  *Runtime
	def Faces // the default tenant's
}

var _ httpserve.FastHandler = Router{}

// Router returns the router of rt's tenants, def the default tenant's faces.
func (rt *Runtime) Router(def Faces) Router { return Router{rt: rt, def: def} }

// ServeHTTP implements http.Handler.
func (rr Router) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	peer, _ := netip.ParseAddrPort(r.RemoteAddr)
	// Every X-Forwarded-Host line counts (the right-most value is the trusted
	// proxy's), and the path prefix is matched as sent: /t%2fb/ names no tenant.
	res, err := rr.rt.Resolver().Resolve(r.Host, tenant.ForwardedHost(r.Header), peer.Addr().Unmap(), r.URL.EscapedPath())
	if err != nil && r.URL.Path == healthPath { // load balancers probe by address: the node's health is no tenant's
		rr.def.ServeHTTP(w, r)
		return
	}
	if err != nil {
		rr.def.RefuseAt(w, r, rr.rt.refusedPath(r.URL.Path), err)
		return
	}
	faces := rr.def
	if res.TenantID != coffer.DefaultTenantID {
		g, err := rr.rt.Graph(r.Context(), res.TenantID)
		if err != nil {
			faces.RefuseAt(w, r, res.Path(r.URL.Path), err)
			return
		}
		faces = g.Faces
		var ok bool
		if w, ok = g.Enter(w, r); !ok {
			faces.RefuseAt(w, r, res.Path(r.URL.Path), ErrTooMany())
			return
		}
	}
	counts := rr.rt.served(res.TenantID)
	counts.requests.Add(1)
	if res.PathOffset > 0 { // a /t/{tenant}/ prefix: the faces see the rest
		r2 := *r
		u := *r.URL
		u.Path, u.RawPath = res.Path(r.URL.Path), ""
		if r.URL.RawPath != "" { // "/t/{id}" is the same bytes in both forms
			u.RawPath = res.Path(r.URL.RawPath)
		}
		r2.URL = &u
		r = &r2
	}
	faces.ServeHTTP(w, r)
	if r.Method != http.MethodHead {
		if n, err := strconv.ParseInt(w.Header().Get("Content-Length"), 10, 64); err == nil {
			counts.bytes.Add(n)
		}
	}
}

// ServeFast implements httpserve.FastHandler: a request whose Host names a served
// tenant, with no path prefix, goes to that tenant's fast path (once its graph is
// built); anything else is declined and net/http answers it through ServeHTTP,
// including every request carrying X-Forwarded-Host (the fast path does not know
// the peer, so cannot tell whether to believe it).
func (rr Router) ServeFast(req *httpserve.FastRequest, w *httpserve.FastWriter) bool {
	if _, fwd := req.Get("X-Forwarded-Host"); fwd {
		return false
	}
	res, err := rr.rt.Resolver().ResolveBytes(req.Host, nil, netip.Addr{}, req.Path)
	if err != nil || res.PathOffset != 0 {
		return false
	}
	faces := rr.def
	if res.TenantID != coffer.DefaultTenantID {
		g := rr.rt.FastGraph(res.TenantID, req.Start)
		if g == nil {
			return false
		}
		faces = g.Faces
	}
	if !faces.ServeFast(req, w) {
		return false
	}
	counts := rr.rt.served(res.TenantID)
	counts.requests.Add(1)
	counts.bytes.Add(w.Bytes)
	return true
}

// refusedPath is the path whose face answers the refusal of a request naming no
// served tenant: past "/t/{tenant}" with a path prefix (a gRPC call to an unknown
// tenant's prefix gets a gRPC status), else path.
func (rt *Runtime) refusedPath(path string) string {
	if rest, ok := strings.CutPrefix(path, "/t/"); ok && rt.cfg.PathPrefix {
		if i := strings.IndexByte(rest, '/'); i >= 0 {
			return rest[i:]
		}
	}
	return path
}

// errNoTenant is every unknown host's answer: it says nothing of which hosts exist.
func errNoTenant() error { return coffer.Errorf(coffer.ENOTFOUND, "not found") }

// ErrTooMany is the answer of a request over its tenant's limits.
func ErrTooMany() error {
	return coffer.Errorf(coffer.ETOOMANY, "too many requests for this tenant; retry after the time in Retry-After")
}

// refusalDelay is how long a refused request waits before its 429 (admit): one
// second, the least a Retry-After can say.
const refusalDelay = time.Second

// Enter admits r to the tenant (its request limits) and returns the writer of its
// answer, paced at the tenant's bandwidth limit if it has one; false, with
// Retry-After and the RateLimit headers set, if r is over the limits: the caller
// writes the refusal.
func (g *Graph) Enter(w http.ResponseWriter, r *http.Request) (http.ResponseWriter, bool) {
	g.touch(time.Now().Unix())
	if !g.admit(w, r) {
		return w, false
	}
	if g.bw != nil {
		w = &pacedResponse{ResponseWriter: w, body: g.bw.Writer(r.Context(), w)}
	}
	return w, true
}

// admit applies the tenant's request limits to r: false (with Retry-After and the
// RateLimit headers set) if it is over them. Requests are counted per user: the
// JWT's user id, "admin" for the admin secret, the client address for anonymous
// ones; a request whose credentials do not verify counts against its address.
//
// A refused request is answered after refusalDelay, when its Retry-After says to
// come back (a GCRA bucket at hundreds of requests per second would let a client
// retry within milliseconds): a client that retries at once on each of its
// connections then gets about one answer per connection per second, instead of as
// many 429s as the CPU can write, which would take the CPU from the other tenants
// the limit is there to protect. The wait holds a parked goroutine and the
// connection, nothing else.
func (g *Graph) admit(w http.ResponseWriter, r *http.Request) bool {
	if g.limit == nil {
		return true
	}
	d := g.limit.Allow(time.Now(), limitKey(g, r))
	tenant.SetHeaders(w.Header(), d)
	if d.OK {
		return true
	}
	t := time.NewTimer(refusalDelay)
	select {
	case <-t.C:
	case <-r.Context().Done():
		t.Stop()
	}
	return false
}

// limitKey is whom r counts against in its tenant's per-user limits.
func limitKey(g *Graph, r *http.Request) string {
	p, err := g.Auth.Principal(r)
	switch {
	case err == nil && p.Admin:
		return "admin"
	case err == nil && p.UserID != "":
		return "user:" + p.UserID
	}
	host, _, _ := strings.Cut(r.RemoteAddr, ":")
	if a, err := netip.ParseAddrPort(r.RemoteAddr); err == nil {
		host = a.Addr().String()
	}
	return "ip:" + host
}

// pacedResponse is a response of a tenant with a bandwidth limit: its body goes
// through the tenant's pacer (tenant.Bandwidth), so it has no ReadFrom (no sendfile).
// Unwrap lets http.ResponseController reach the connection's deadlines.
type pacedResponse struct {
	http.ResponseWriter
	body io.Writer
}

// Write implements http.ResponseWriter.
func (p *pacedResponse) Write(b []byte) (int, error) { return p.body.Write(b) }

// Unwrap returns the response it paces.
func (p *pacedResponse) Unwrap() http.ResponseWriter { return p.ResponseWriter }

// Flush implements http.Flusher.
func (p *pacedResponse) Flush() { _ = http.NewResponseController(p.ResponseWriter).Flush() }
