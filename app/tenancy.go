package app

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/api"
	"github.com/coffer/coffer/blob"
	"github.com/coffer/coffer/bus"
	"github.com/coffer/coffer/internal/httpserve"
	"github.com/coffer/coffer/meta"
	"github.com/coffer/coffer/tenant"
)

// tenantRefresh is how often a node reads the tenant table for changes made
// through other nodes.
const tenantRefresh = 2 * time.Second

// tenancy routes each request to its tenant's graph (with --tenants). The default
// tenant's graph is the server's own (Main's service and faces); the others are
// built on a tenant's first request and rebuilt when its row changes. The tenant
// table is read at start, after every change made through this node, and every
// refresh interval (changes made through another node).
type tenancy struct {
	s        *Main
	cfg      TenantsConfig
	key      []byte // the server key (TenantsConfig.Key)
	sealer   *tenant.Sealer
	reg      meta.Tenants
	def      *api.Router // the default tenant's faces
	resolver atomic.Pointer[tenant.Resolver]
	// tenants holds every tenant row by id as last read; graphs the graphs built so
	// far. Both are replaced whole (copy on write) under mu, read without it.
	tenants atomic.Pointer[map[string]*coffer.Tenant]
	graphs  atomic.Pointer[map[string]*tenantGraph]
	mu      sync.Mutex
	// counts holds each tenant's *servedCounts (by id), kept across rebuilds.
	counts sync.Map
	// defHosts is the default tenant's hosts, normalized.
	defHosts []string
	// changed wakes run when another node changed a tenant (bus.TenantChanged).
	changed chan struct{}
	// labels holds the tenants with a metrics label of their own (registerMetrics).
	labelMu sync.Mutex
	labels  map[string]string
}

// kick makes run reload the tenant table now.
func (tn *tenancy) kick() {
	select {
	case tn.changed <- struct{}{}:
	default:
	}
}

// servedCounts is what this node served one tenant since it started.
type servedCounts struct {
	requests atomic.Int64
	bytes    atomic.Int64 // response bodies: their Content-Length (not HEAD's), or the fast path's bytes
}

// served returns tenant id's counts.
func (tn *tenancy) served(id string) *servedCounts {
	if c, ok := tn.counts.Load(id); ok {
		return c.(*servedCounts)
	}
	c, _ := tn.counts.LoadOrStore(id, &servedCounts{})
	return c.(*servedCounts)
}

// defaultHosts returns the default tenant's hosts, normalized.
func (tn *tenancy) defaultHosts() []string { return tn.defHosts }

// newTenancy reads c and the tenant table; the caller sets def.
func newTenancy(ctx context.Context, s *Main, c TenantsConfig) (*tenancy, error) {
	key, err := base64.StdEncoding.DecodeString(c.Key)
	if err != nil || len(key) != 32 {
		return nil, fmt.Errorf("--tenant-key must be 32 bytes in base64 (head -c 32 /dev/urandom | base64)")
	}
	if c.PlatformSecret == "" {
		return nil, fmt.Errorf("--tenants needs --platform-secret: the platform admin's credential for managing tenants")
	}
	reg, ok := s.st.base.(meta.Tenants)
	if !ok {
		return nil, fmt.Errorf("the metadata store does not keep tenants (meta.Tenants)")
	}
	sealer, err := tenant.NewSealer(key)
	if err != nil {
		return nil, err
	}
	tn := &tenancy{s: s, cfg: c, key: key, sealer: sealer, reg: reg, changed: make(chan struct{}, 1), labels: map[string]string{}}
	for _, h := range c.DefaultHosts {
		n, err := tenant.NormalizeHost(h)
		if err != nil {
			return nil, fmt.Errorf("--default-tenant-hosts: %q: %s", h, coffer.ErrorMessage(err))
		}
		tn.defHosts = append(tn.defHosts, n)
	}
	empty := map[string]*tenantGraph{}
	tn.graphs.Store(&empty)
	s.st.cache.OnTenantChanged(func(string) { tn.kick() })
	s.st.cache.OnTenantGone(tn.forget)
	if err := tn.reload(ctx); err != nil {
		return nil, err
	}
	return tn, nil
}

// reload reads the tenant table, rebuilds the resolver and drops the graphs of
// tenants that changed or are gone (they are built again on their next request).
func (tn *tenancy) reload(ctx context.Context) error {
	list, err := tn.reg.ListTenants(ctx)
	if err != nil {
		return err
	}
	rs, err := tn.newResolver(list)
	if err != nil {
		return err
	}
	rows := make(map[string]*coffer.Tenant, len(list))
	for _, t := range list {
		rows[t.ID] = t
	}
	tn.mu.Lock()
	defer tn.mu.Unlock()
	tn.resolver.Store(rs)
	if prev := tn.tenants.Load(); prev != nil {
		for _, id := range goneSince(*prev, rows) {
			tn.s.st.cache.DropTenant(id)
		}
	}
	tn.tenants.Store(&rows)
	old := *tn.graphs.Load()
	kept := make(map[string]*tenantGraph, len(old))
	for id, g := range old {
		if t := rows[id]; t != nil && t.UpdatedAt.Equal(g.tenant.UpdatedAt) {
			kept[id] = g
		} else {
			g.close()
		}
	}
	tn.graphs.Store(&kept)
	return nil
}

// goneSince lists the tenants of prev that were deleted in rows: gone, being deleted,
// or held by a tenant created since (an id taken again). A node whose cluster bus
// lost the TenantGone event drops their cache entries on its next reload all the same.
func goneSince(prev, rows map[string]*coffer.Tenant) []string {
	var ids []string
	for id, p := range prev {
		t := rows[id]
		if t == nil || !t.CreatedAt.Equal(p.CreatedAt) || t.State == coffer.TenantDeleting && p.State != coffer.TenantDeleting {
			ids = append(ids, id)
		}
	}
	return ids
}

// incarnation tells apart the tenants that have held t's id (a deleted tenant's id
// may be taken again): its creation time, in microseconds (the stores' precision).
func incarnation(t *coffer.Tenant) string { return strconv.FormatInt(t.CreatedAt.UnixMicro(), 36) }

// forget drops what this node holds of tenant id, deleted, beside the metadata cache
// (which dropped its own entries before calling it, OnTenantGone): content and
// variants, its sites' edge entries and bucket names. What the node served for the
// id stays counted: its metrics are counters, which never go down, and the platform
// operator's alone.
func (tn *tenancy) forget(id string) {
	if st := tn.s.st; st.content != nil {
		st.content.DropTenant(id)
	}
	if st := tn.s.st; st.variants != nil {
		st.variants.DropTenant(id)
	}
	if st := tn.s.sites; st != nil {
		st.ForgetTenant(id)
	}
}

// dropEverywhere drops tenant id's entries from every cache of every node: this
// node's at once, the others' through the cluster bus (this node hears it too, and
// dropping twice is harmless).
func (tn *tenancy) dropEverywhere(ctx context.Context, id string) {
	tn.s.st.cache.DropTenant(id)
	if b := tn.s.bus; b != nil {
		if err := b.Publish(ctx, bus.Event{Kind: bus.TenantGone, Tenant: id}); err != nil {
			tn.s.log.Warn("telling the other nodes a tenant was deleted failed; they drop its entries at their next reload", "tenant", id, "err", err)
		}
	}
}

// newResolver builds the resolver of the tenants in list and the default tenant's
// hosts.
func (tn *tenancy) newResolver(list []*coffer.Tenant) (*tenant.Resolver, error) {
	entries := []tenant.Entry{{ID: coffer.DefaultTenantID, Hosts: tn.defHosts}}
	for _, t := range list {
		entries = append(entries, tenant.Entry{ID: t.ID, Hosts: t.Hosts})
	}
	opts := tenant.Options{PathPrefix: tn.cfg.PathPrefix, Wildcards: tn.cfg.Wildcards}
	for _, p := range tn.cfg.TrustedProxies {
		pfx, err := netip.ParsePrefix(p)
		if err != nil {
			return nil, fmt.Errorf("--trusted-proxies: %q is not a CIDR prefix like 10.0.0.0/8", p)
		}
		opts.TrustedProxies = append(opts.TrustedProxies, pfx.Masked())
	}
	return tenant.NewResolver(entries, opts)
}

// graph returns tenant id's graph, building it on first use; nil and a client-safe
// error for a tenant that is not served.
func (tn *tenancy) graph(ctx context.Context, id string) (*tenantGraph, error) {
	if g := (*tn.graphs.Load())[id]; g != nil {
		return g, servedState(g.tenant)
	}
	tn.mu.Lock()
	defer tn.mu.Unlock()
	if g := (*tn.graphs.Load())[id]; g != nil { // built while we waited
		return g, servedState(g.tenant)
	}
	t := (*tn.tenants.Load())[id]
	if t == nil {
		return nil, errNoTenant()
	}
	if err := servedState(t); err != nil {
		return nil, err
	}
	g, err := tn.s.buildTenant(context.WithoutCancel(ctx), t)
	if err != nil {
		tn.s.log.Error("building a tenant failed", "tenant", id, "err", err)
		return nil, coffer.Errorf(coffer.EUNAVAILABLE, "this tenant cannot be served right now")
	}
	g.touch(time.Now().Unix())
	old := *tn.graphs.Load()
	next := make(map[string]*tenantGraph, len(old)+1)
	for k, v := range old {
		next[k] = v
	}
	if len(next) >= max(tn.cfg.MaxGraphs, 1) {
		tn.dropLeastUsed(next)
	}
	next[id] = g
	tn.graphs.Store(&next)
	return g, nil
}

// dropLeastUsed removes the least recently used graph from graphs and closes it.
// Requests in flight on it finish on it.
func (tn *tenancy) dropLeastUsed(graphs map[string]*tenantGraph) {
	var lru string
	for id, g := range graphs {
		if lru == "" || g.used.Load() < graphs[lru].used.Load() {
			lru = id
		}
	}
	if g := graphs[lru]; g != nil {
		delete(graphs, lru)
		g.close()
	}
}

// servedState refuses a tenant that is suspended or being deleted.
func servedState(t *coffer.Tenant) error {
	switch t.State {
	case coffer.TenantSuspended:
		return coffer.Errorf(coffer.EFORBIDDEN, "this tenant is suspended; its data is kept. Contact the platform operator")
	case coffer.TenantDeleting:
		return coffer.Errorf(coffer.EFORBIDDEN, "this tenant is being deleted")
	}
	return nil
}

// errTooMany is the answer of a request over its tenant's limits.
func errTooMany() error {
	return coffer.Errorf(coffer.ETOOMANY, "too many requests for this tenant; retry after the time in Retry-After")
}

// refusedPath is the path whose face answers the refusal of a request naming no
// served tenant: past "/t/{tenant}" with a path prefix (a gRPC call to an unknown
// tenant's prefix gets a gRPC status), else path.
func (tn *tenancy) refusedPath(path string) string {
	if rest, ok := strings.CutPrefix(path, "/t/"); ok && tn.cfg.PathPrefix {
		if i := strings.IndexByte(rest, '/'); i >= 0 {
			return rest[i:]
		}
	}
	return path
}

// errNoTenant is every unknown host's answer: it says nothing of which hosts exist.
func errNoTenant() error { return coffer.Errorf(coffer.ENOTFOUND, "not found") }

// healthPath is the node's health check, answered for any host.
const healthPath = "/healthz"

// tenantRouter is the API port's handler with --tenants: it resolves the tenant of
// each request and hands it to that tenant's faces. What it refuses (an unknown
// host, a tenant not served, a rate limit) the face of the request's path answers,
// in its own protocol (api.Router.RefuseAt): hasura JSON on /v1, a Connect or gRPC
// status on the RPC face.
type tenantRouter struct{ tn *tenancy }

var _ httpserve.FastHandler = tenantRouter{}

// ServeHTTP implements http.Handler.
func (rt tenantRouter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	peer, _ := netip.ParseAddrPort(r.RemoteAddr)
	// Every X-Forwarded-Host line counts (the right-most value is the trusted
	// proxy's), and the path prefix is matched as sent: /t%2fb/ names no tenant.
	res, err := rt.tn.resolver.Load().Resolve(r.Host, tenant.ForwardedHost(r.Header), peer.Addr().Unmap(), r.URL.EscapedPath())
	if err != nil && r.URL.Path == healthPath { // load balancers probe by address: the node's health is no tenant's
		rt.tn.def.ServeHTTP(w, r)
		return
	}
	if err != nil {
		rt.tn.def.RefuseAt(w, r, rt.tn.refusedPath(r.URL.Path), err)
		return
	}
	router := rt.tn.def
	if res.TenantID != coffer.DefaultTenantID {
		g, err := rt.tn.graph(r.Context(), res.TenantID)
		if err != nil {
			router.RefuseAt(w, r, res.Path(r.URL.Path), err)
			return
		}
		g.touch(time.Now().Unix())
		if !g.admit(w, r) {
			g.router.RefuseAt(w, r, res.Path(r.URL.Path), errTooMany())
			return
		}
		router = g.router
		if g.bw != nil {
			w = &pacedResponse{ResponseWriter: w, body: g.bw.Writer(r.Context(), w)}
		}
	}
	counts := rt.tn.served(res.TenantID)
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
	router.ServeHTTP(w, r)
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
func (rt tenantRouter) ServeFast(req *httpserve.FastRequest, w *httpserve.FastWriter) bool {
	if _, fwd := req.Get("X-Forwarded-Host"); fwd {
		return false
	}
	res, err := rt.tn.resolver.Load().ResolveBytes(req.Host, nil, netip.Addr{}, req.Path)
	if err != nil || res.PathOffset != 0 {
		return false
	}
	router := rt.tn.def
	if res.TenantID != coffer.DefaultTenantID {
		g := rt.tn.fastGraph(res.TenantID, req.Start)
		if g == nil {
			return false
		}
		router = g.router
	}
	if !router.ServeFast(req, w) {
		return false
	}
	counts := rt.tn.served(res.TenantID)
	counts.requests.Add(1)
	counts.bytes.Add(w.Bytes)
	return true
}

// fastGraph returns tenant id's graph for a fast-path answer, touched at now: nil
// (net/http answers) when it is not built yet, when the tenant is not served, or
// when it has request or bandwidth limits, which apply on net/http's path.
func (tn *tenancy) fastGraph(id string, now time.Time) *tenantGraph {
	g := (*tn.graphs.Load())[id]
	if g == nil || servedState(g.tenant) != nil || g.limit != nil || g.bw != nil {
		return nil
	}
	g.touch(now.Unix())
	return g
}

// run keeps the tenants current until ctx ends: it reloads the tenant table every
// interval and at once when another node changed a tenant (PostgreSQL), sweeps the built tenants' abandoned uploads and orphan blobs every
// sweep interval, and removes the data of deleted tenants in batches.
func (tn *tenancy) run(ctx context.Context, every, sweepEvery time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	lastSweep := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-tn.changed:
		}
		if err := tn.reload(ctx); err != nil && ctx.Err() == nil {
			tn.s.log.Warn("reading the tenant table failed; retrying", "err", err)
		}
		tn.purgeDeleted(ctx)
		if time.Since(lastSweep) >= sweepEvery {
			lastSweep = time.Now()
			tn.sweep(ctx)
		}
	}
}

// sweep sweeps every built tenant's abandoned uploads and orphan blobs.
func (tn *tenancy) sweep(ctx context.Context) {
	for id, g := range *tn.graphs.Load() {
		rep, err := g.svc.Sweep(ctx, time.Now().Add(-tn.s.cfg.StaleUploadAfter))
		if err != nil && ctx.Err() == nil {
			tn.s.log.Error("tenant sweep failed", "tenant", id, "err", err)
		} else if rep.AbandonedUploads+len(rep.OrphanBlobs) > 0 {
			tn.s.log.Info("tenant sweep", "tenant", id, "abandoned_uploads", rep.AbandonedUploads, "orphan_blobs", len(rep.OrphanBlobs))
		}
	}
}

// purgeBatch is how many files a purge step removes.
const purgeBatch = 500

// purgeDeleted removes a batch of each deleted tenant's data (its blobs, then its
// rows), resuming where a crash or the previous step left off; the tenant row goes
// last.
func (tn *tenancy) purgeDeleted(ctx context.Context) {
	for id, t := range *tn.tenants.Load() {
		if t.State != coffer.TenantDeleting {
			continue
		}
		err := tn.purgeStep(ctx, t)
		switch c := coffer.ErrorCode(err); {
		case err == nil || ctx.Err() != nil:
		case c == coffer.ENOTFOUND || c == coffer.EPRECONDITION:
			tn.kick() // another node finished it, or the id is a new tenant's: the next reload forgets it
		default:
			tn.s.log.Warn("removing a deleted tenant's data failed; retrying", "tenant", id, "err", err)
		}
	}
}

// purgeStep removes a batch of t's blobs, or once its blob store is empty, a batch
// of its rows (and the blobs they name, written since). The blobs go while t's row
// is still there, so never after a new tenant has taken its id (CreateTenant refuses
// an id being deleted): a purge cannot remove the blobs of the id's next tenant.
func (tn *tenancy) purgeStep(ctx context.Context, t *coffer.Tenant) error {
	cfg, err := tn.settings(t)
	if err != nil {
		return err
	}
	blobs, err := tn.s.tenantBlobs(ctx, t, cfg.Storage)
	if err != nil {
		return err
	}
	defer blobs.Close()
	if more, err := tn.sweepDeleted(ctx, t, blobs); err != nil || more {
		return err
	}
	keys, done, err := tn.reg.PurgeTenant(ctx, t.ID, purgeBatch)
	if err != nil {
		return err
	}
	for _, k := range keys {
		if err := blobs.Delete(ctx, k); err != nil {
			return err // an orphan now: the next step's sweep removes it
		}
	}
	if !done {
		return nil
	}
	tn.s.log.Info("tenant deleted", "tenant", t.ID)
	tn.dropEverywhere(ctx, t.ID)
	return tn.reload(ctx)
}

// errBatchListed stops sweepDeleted's listing at a full batch.
var errBatchListed = errors.New("a batch listed")

// sweepDeleted deletes up to purgeBatch blobs from the store of t, a tenant being
// deleted (every blob: those of its rows, image variants, orphans), and reports
// whether more may be left. It lists first and deletes only if t's row is still
// there afterwards: every key listed is then t's, not a later tenant's of its id.
func (tn *tenancy) sweepDeleted(ctx context.Context, t *coffer.Tenant, blobs *blob.Store) (more bool, err error) {
	var keys []string
	err = blobs.List(ctx, "", func(a blob.Attrs) error {
		if keys = append(keys, a.Key); len(keys) == purgeBatch {
			return errBatchListed
		}
		return nil
	})
	if err != nil && !errors.Is(err, errBatchListed) || len(keys) == 0 {
		return false, err
	}
	cur, err := tn.reg.GetTenant(ctx, t.ID)
	if err != nil || !cur.CreatedAt.Equal(t.CreatedAt) || cur.State != coffer.TenantDeleting {
		return false, err // gone (purged by another node) or another tenant's now: not ours to sweep
	}
	for _, k := range keys {
		if err := blobs.Delete(ctx, k); err != nil {
			return false, err
		}
	}
	return len(keys) == purgeBatch, nil
}

// refusalDelay is how long a refused request waits before its 429 (admit): one
// second, the least a Retry-After can say.
const refusalDelay = time.Second

// admit applies the tenant's request limits to r: false (with Retry-After and the
// RateLimit headers set; the caller writes the refusal) if it is over them. Requests are counted per user: the JWT's user id,
// "admin" for the admin secret, the client address for anonymous ones; a request
// whose credentials do not verify counts against its address.
//
// A refused request is answered after refusalDelay, when its Retry-After says to
// come back (a GCRA bucket at hundreds of requests per second would let a client
// retry within milliseconds): a client that retries at once on each of its
// connections then gets about one answer per connection per second, instead of as
// many 429s as the CPU can write, which would take the CPU from the other tenants
// the limit is there to protect. The wait holds a parked goroutine and the
// connection, nothing else.
func (g *tenantGraph) admit(w http.ResponseWriter, r *http.Request) bool {
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
func limitKey(g *tenantGraph, r *http.Request) string {
	p, err := g.authn.Principal(r)
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
