package app

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/api"
	"github.com/coffer/coffer/bus"
	"github.com/coffer/coffer/internal/httpserve"
	"github.com/coffer/coffer/meta"
	"github.com/coffer/coffer/service"
	"github.com/coffer/coffer/site"
	"github.com/coffer/coffer/site/audit"
	"github.com/coffer/coffer/site/edge"
	"github.com/coffer/coffer/tenancy"
	"github.com/coffer/coffer/tenant"
)

// SitesConfig is the settings of sites (--sites and the flags beside it).
type SitesConfig struct {
	// On serves sites: a request whose host is a site's goes to the site.
	On bool
	// EdgeDir is the pull-through cache's directory ("" = <data dir>/edge);
	// EdgeSize bounds its bytes on disk and EdgeMaxObject one object (larger ones are
	// streamed through, not kept).
	EdgeDir       string
	EdgeSize      int64
	EdgeMaxObject int64
	// AuditDir is the audit log's directory ("" = <data dir>/audit; "-" = off);
	// AuditSize bounds its files' total; AuditCollector, when set, is the URL the
	// records are shipped to in batches.
	AuditDir       string
	AuditSize      int64
	AuditCollector string
	// Refresh is how often every node reads the sites again (changes on another
	// node arrive sooner through the invalidation bus on PostgreSQL).
	Refresh time.Duration
}

// validate checks c.
func (c SitesConfig) validate() error {
	if !c.On {
		return nil
	}
	if c.EdgeSize <= 0 || c.EdgeMaxObject <= 0 || c.AuditSize <= 0 || c.Refresh <= 0 {
		return fmt.Errorf("--edge-cache-size, --edge-max-object, --audit-size and --sites-refresh must be > 0")
	}
	if c.AuditCollector != "" {
		if u, err := url.Parse(c.AuditCollector); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("--audit-collector must be an http(s) URL")
		}
	}
	return nil
}

// sites serves the sites of every tenant: the host → site map, the edge cache,
// the audit log and the serving handler, built once per node.
type sites struct {
	s       *Main
	reg     meta.SiteRegistry
	pub     bus.Publisher // nil: one node (SQLite), nobody to tell
	hosts   atomic.Pointer[siteMap]
	edge    *edge.Cache
	audit   *audit.Log // nil: off
	handler *site.Handler
	frame   *httpserve.Frame
	names   *nameCache
	own     map[string]string // the server's own hosts (ownHosts)
	sealer  *tenant.Sealer    // nil: no --tenant-key, origins' secrets cannot be stored
	client  *http.Client      // through the webhook SSRF guard
	kick    chan struct{}
	log     *slog.Logger
	// ctx ends at close: it stops the purge webhooks' attempts (hooks waits for them).
	ctx    context.Context
	cancel context.CancelFunc
	hooks  sync.WaitGroup
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
	doc      *site.Site
	compiled *site.Compiled
}

// tenantService returns the service of tenant id (the default tenant's without
// --tenants), refusing a suspended or deleted tenant.
func (st *sites) tenantService(ctx context.Context, id string) (*service.Service, *tenancy.Graph, error) {
	if id == coffer.DefaultTenantID || st.s.tenancy == nil {
		return st.s.svc, nil, nil
	}
	g, err := st.s.tenancy.Graph(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	return g.Service, g, nil
}

// lookup returns the site of host, nil if none.
func (st *sites) lookup(host string) *siteEntry {
	e, _ := st.lookupHost(host)
	return e
}

// lookupHost returns the site of host and the host normalized: nil for a host
// that is reserved (sitehosts.go), which a tenant wins.
func (st *sites) lookupHost(host string) (*siteEntry, string) {
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

// siteFront answers requests for a site's host and passes the rest to next (the
// faces, or the tenant router).
type siteFront struct {
	st   *sites
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
// (X-Forwarded-Host from a trusted proxy, tenant.Resolver.EffectiveHost), so that
// a site and a tenant are never chosen by two different hosts; without, its Host.
func (st *sites) requestHost(r *http.Request) string {
	if tn := st.s.tenancy; tn != nil {
		peer, _ := netip.ParseAddrPort(r.RemoteAddr)
		return tn.Resolver().EffectiveHost(r.Host, tenant.ForwardedHost(r.Header), peer.Addr().Unmap())
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
	if _, fwd := req.Get("X-Forwarded-Host"); fwd && f.st.s.tenancy != nil {
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
func (st *sites) serveFast(e *siteEntry, host string, req *httpserve.FastRequest, w *httpserve.FastWriter) bool {
	svc := st.s.svc
	if e.tenant != coffer.DefaultTenantID && st.s.tenancy != nil {
		g := st.s.tenancy.FastGraph(e.tenant, req.Start)
		if g == nil {
			return false
		}
		svc = g.Service
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
func (st *sites) serve(w http.ResponseWriter, r *http.Request) {
	w = httpserve.Routed(w, r, "site")
	e, host := st.lookupHost(st.requestHost(r))
	if e == nil { // the site went between the front's lookup and now
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	svc, g, err := st.tenantService(r.Context(), e.tenant)
	if err != nil {
		http.Error(w, coffer.ErrorMessage(err), httpserve.StatusOf(err))
		return
	}
	if g != nil {
		var ok bool
		if w, ok = g.Enter(w, r); !ok {
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
