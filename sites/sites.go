package sites

import (
	"context"
	"log/slog"
	"net/http"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/api"
	"github.com/coffer/coffer/bus"
	"github.com/coffer/coffer/internal/httpserve"
	"github.com/coffer/coffer/meta"
	"github.com/coffer/coffer/metrics"
	"github.com/coffer/coffer/service"
	"github.com/coffer/coffer/site"
	"github.com/coffer/coffer/site/audit"
	"github.com/coffer/coffer/site/edge"
	"github.com/coffer/coffer/tenant"
)

// Runtime serves the sites of every tenant: the host → site map, the edge cache,
// the audit log and the serving handler, built once per node (New).
type Runtime struct {
	cfg     Config
	opt     Options
	reg     meta.SiteRegistry
	hosts   atomic.Pointer[siteMap]
	edge    *edge.Cache
	audit   *audit.Log // nil: off
	handler *site.Handler
	frame   *httpserve.Frame
	names   *nameCache
	client  *http.Client // through the SSRF guard (Options.Transport)
	kick    chan struct{}
	log     *slog.Logger
	// ctx ends at close: it stops the purge webhooks' attempts (hooks waits for them).
	ctx    context.Context
	cancel context.CancelFunc
	hooks  sync.WaitGroup
}

// Options is what a Runtime is built with beside its Config: the stores, the
// default tenant's service, the tenancy runtime and the server's settings it
// shares.
type Options struct {
	// Store is the metadata database's store (uncached): it must keep sites
	// (meta.SiteRegistry); its tenants' views (meta.Tenanted) serve the site use
	// cases.
	Store meta.Store
	// Default is the default tenant's service.
	Default *service.Service
	// Tenants is the tenancy runtime; nil without tenants: every site is the default
	// tenant's.
	Tenants Tenants
	// Bus tells the other nodes of purges; nil on one node (SQLite), nobody to tell.
	Bus bus.Publisher
	// Transport dials through the SSRF guard: sites' origins and purge webhooks are
	// tenants' settings.
	Transport http.RoundTripper
	// Sealer opens the sites' sealed secrets; nil (no --tenant-key): they cannot be
	// stored or opened.
	Sealer *tenant.Sealer
	// Own is the server's own hosts, each with what reserves it (OwnHosts).
	Own map[string]string
	// DataDir holds the edge cache and the audit log when their directories are "".
	DataDir string
	// Serving is how the sites' requests are served: the API's settings.
	Serving Serving
	Log     *slog.Logger
}

// Serving is the settings of the sites' Frame, the API's: its access log, request
// metrics (nil: none) and slow-client bounds (httpserve.Frame).
type Serving struct {
	AccessLog       httpserve.AccessLogConfig
	Metrics         *metrics.Metrics
	ReadIdleTimeout time.Duration
	WriteTimeout    time.Duration
	MinWriteRate    int64
}

// Tenants is the tenancy runtime as the sites see it: a site's tenant other than
// the default one is reached through it.
type Tenants interface {
	// Host returns the host r names as the tenant router reads it (X-Forwarded-Host
	// from a trusted proxy), so that a site and a tenant are never chosen by two
	// different hosts.
	Host(r *http.Request) string
	// Reserved reports whether the normalized host h is, or may become, a tenant's,
	// and why.
	Reserved(h string) (why string, reserved bool)
	// Admit returns the service of tenant id for request r of one of its sites, r
	// counted against the tenant's request limits and w paced by its bandwidth limit
	// (the writer to answer through). An error refuses the request: a tenant that
	// is missing, suspended or being deleted; ETOOMANY over its request limits
	// (the rate-limit headers set on w).
	Admit(w http.ResponseWriter, r *http.Request, id string) (*service.Service, http.ResponseWriter, error)
	// Fast returns tenant id's service for a fast-path answer at now, nil to decline
	// (net/http answers): a graph not built yet, a tenant not served or with
	// request or bandwidth limits, which apply on net/http's path.
	Fast(id string, now time.Time) *service.Service
}

// siteMap is the sites of every tenant, by host and by tenant.
type siteMap struct {
	byHost   map[string]*siteEntry
	byTenant map[string][]*siteEntry
}

// siteEntry is one site, compiled.
type siteEntry struct {
	tenant   string
	row      *coffer.Site
	doc      *site.Document
	compiled *site.Compiled
}

// lookup returns the site of host, nil if none.
func (st *Runtime) lookup(host string) *siteEntry {
	e, _ := st.lookupHost(host)
	return e
}

// lookupHost returns the site of host and the host normalized: nil for a host
// that is reserved (hosts.go), which a tenant wins.
func (st *Runtime) lookupHost(host string) (*siteEntry, string) {
	m := st.hosts.Load()
	if m == nil || len(m.byHost) == 0 {
		return nil, ""
	}
	h, err := tenant.NormalizeHost(host)
	if err != nil {
		return nil, ""
	}
	e := m.byHost[h]
	if e == nil || st.reserved(h) != "" {
		return nil, ""
	}
	return e, h
}

// Front returns the handler that answers requests for a site's host and passes
// the rest to next (the faces, or the tenant router), which must implement
// httpserve.FastHandler.
func (st *Runtime) Front(next http.Handler) http.Handler { return siteFront{st: st, next: next} }

// siteFront answers requests for a site's host and passes the rest to next.
type siteFront struct {
	st   *Runtime
	next http.Handler
}

var (
	_ httpserve.FastHandler = siteFront{}
	_ api.Face              = siteFront{}
)

// Prefixes implements api.Face with the prefixes of the faces behind the front, so
// that a router may put another face beside coffer's (the site hosts stay coffer's
// for every path that face does not claim).
func (f siteFront) Prefixes() []string {
	if face, ok := f.next.(api.Face); ok {
		return face.Prefixes()
	}
	return nil
}

// requestHost is the host r names: with tenants, the one the tenant router reads
// (Tenants.Host), so that a site and a tenant are never chosen by two different
// hosts; without, its Host.
func (st *Runtime) requestHost(r *http.Request) string {
	if st.opt.Tenants != nil {
		return st.opt.Tenants.Host(r)
	}
	return r.Host
}

// ServeHTTP implements http.Handler.
func (f siteFront) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if f.st.lookup(f.st.requestHost(r)) != nil {
		f.st.frame.ServeHTTP(w, r)
		return
	}
	f.next.ServeHTTP(w, r)
}

// ServeFast implements httpserve.FastHandler: a site's requests go to the site
// handler's fast path (what it declines, net/http answers through ServeHTTP);
// others go to next's fast path.
func (f siteFront) ServeFast(req *httpserve.FastRequest, w *httpserve.FastWriter) bool {
	if _, fwd := req.Get("X-Forwarded-Host"); fwd && f.st.opt.Tenants != nil {
		return false // whether to believe it is net/http's to tell (requestHost)
	}
	if m := f.st.hosts.Load(); m != nil && len(m.byHost) > 0 {
		if e, host := f.st.lookupHost(string(req.Host)); e != nil {
			return f.st.serveFast(e, host, req, w)
		}
	}
	return f.next.(httpserve.FastHandler).ServeFast(req, w)
}

// serveFast answers a request of site e on the fast path, or declines it: for a
// tenant whose graph is not built yet, that is suspended, or has request or
// bandwidth limits (admission and pacing are net/http's path's, as for the tenant
// router's fast path).
func (st *Runtime) serveFast(e *siteEntry, host string, req *httpserve.FastRequest, w *httpserve.FastWriter) bool {
	svc := st.opt.Default
	if e.tenant != coffer.DefaultTenantID && st.opt.Tenants != nil {
		if svc = st.opt.Tenants.Fast(e.tenant, req.Start); svc == nil {
			return false
		}
	}
	fs := st.frame.BeginFast(req)
	sr := site.Request{Tenant: e.tenant, Site: e.compiled, Buckets: siteBuckets{st: st, tenant: e.tenant, svc: svc},
		Host: host, RequestID: fs.ID}
	if req.Peer.IsValid() {
		sr.Client = req.Peer.Addr().String()
	}
	return st.handler.ServeFast(st.frame, fs, req, w, sr)
}

// serve answers one request of a site, inside the Frame.
func (st *Runtime) serve(w http.ResponseWriter, r *http.Request) {
	w = httpserve.Routed(w, r, "site")
	e, host := st.lookupHost(st.requestHost(r))
	if e == nil { // the site went between the front's lookup and now
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	svc := st.opt.Default
	if e.tenant != coffer.DefaultTenantID && st.opt.Tenants != nil {
		var err error
		if svc, w, err = st.opt.Tenants.Admit(w, r, e.tenant); err != nil {
			http.Error(w, coffer.ErrorMessage(err), httpserve.StatusOf(err))
			return
		}
	}
	req := site.Request{Tenant: e.tenant, Site: e.compiled, Buckets: siteBuckets{st: st, tenant: e.tenant, svc: svc},
		Host: host, Client: clientAddr(r)}
	if hs := httpserve.StateOf(r); hs != nil {
		req.RequestID = hs.ID
	}
	st.handler.Serve(w, r, req)
}

// clientAddr is r's peer address without the port.
func clientAddr(r *http.Request) string {
	if ap, err := netip.ParseAddrPort(r.RemoteAddr); err == nil {
		return ap.Addr().Unmap().String()
	}
	return r.RemoteAddr
}
