package tenancy

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/auth"
	"github.com/coffer/coffer/blob"
	"github.com/coffer/coffer/bus"
	"github.com/coffer/coffer/meta"
	"github.com/coffer/coffer/service"
	"github.com/coffer/coffer/tenant"
)

// Refresh is how often a node reads the tenant table for changes made through
// other nodes.
const Refresh = 2 * time.Second

// MetaCache is the node's metadata cache as the runtime uses it (cache.Meta).
type MetaCache interface {
	// OnTenantChanged sets fn to run when another node changed a tenant's row.
	OnTenantChanged(fn func(tenant string))
	// OnTenantGone sets fn to run when a tenant was deleted, on any node.
	OnTenantGone(fn func(tenant string))
	// DropTenant drops tenant's entries and runs the OnTenantGone function.
	DropTenant(tenant string)
}

// Deps are what the runtime gets from the wiring.
type Deps struct {
	// Store is the metadata database's store: the tenant registry, whose tenants'
	// views (meta.Tenanted) hold their usage.
	Store meta.Store
	// Blobs is the shared blob store, whose tenants' views hold their blobs.
	Blobs *blob.Store
	Cache MetaCache
	// Build builds tenant t's graph from its opened settings: its Service, Auth and
	// Faces (the runtime sets the rest).
	Build func(ctx context.Context, t *coffer.Tenant, s Settings) (*Graph, error)
	// Forget drops what the node holds of a deleted tenant beside the metadata cache
	// (content, variants, sites); nil: nothing.
	Forget func(tenant string)
	// SiteHost returns the first of hosts that is a site's, "" if none, after
	// reading the other nodes' latest sites; nil: no sites.
	SiteHost func(ctx context.Context, hosts []string) (string, error)
	// Bus tells the other nodes of a deleted tenant; nil: one node, nobody to tell.
	Bus bus.Publisher
	Log *slog.Logger
	// StaleUploadAfter is the age past which the sweep removes an upload left
	// unfinished.
	StaleUploadAfter time.Duration
}

// Runtime routes each request to its tenant's graph. The default tenant's graph is
// the server's own (Router's def); the others are built on a tenant's first
// request and rebuilt when its row changes. The tenant table is read at start,
// after every change made through this node, and every Refresh (changes made
// through another node).
type Runtime struct {
	cfg      Config
	deps     Deps
	key      []byte // the server key (Config.Key)
	sealer   *tenant.Sealer
	reg      meta.Tenants
	opts     tenant.Options
	resolver atomic.Pointer[tenant.Resolver]
	// tenants holds every tenant row by id as last read; graphs the graphs built so
	// far. Both are replaced whole (copy on write) under mu, read without it.
	tenants atomic.Pointer[map[string]*coffer.Tenant]
	graphs  atomic.Pointer[map[string]*Graph]
	mu      sync.Mutex
	// counts holds each tenant's *servedCounts (by id), kept across rebuilds.
	counts sync.Map
	// defHosts is the default tenant's hosts, normalized.
	defHosts []string
	// changed wakes Run when another node changed a tenant (bus.TenantChanged).
	changed chan struct{}
	// labels holds the tenants with a metrics label of their own (RegisterMetrics).
	labelMu sync.Mutex
	labels  map[string]string
}

var _ service.TenantRuntime = (*Runtime)(nil)

// Graph is one tenant's object graph: its service over its views of the shared
// stores and caches, its credentials, and its faces.
type Graph struct {
	Service *service.Service
	Auth    *auth.Authenticator
	Faces   Faces
	tenant  *coffer.Tenant
	limit   *tenant.RateLimiter // nil: no request limits
	bw      *tenant.Bandwidth   // nil: no bandwidth limit
	used    atomic.Int64        // Unix second of its last request, for dropping the least recently used
}

// touch records a request now, writing at most once a second.
func (g *Graph) touch(now int64) {
	if g.used.Load() != now {
		g.used.Store(now)
	}
}

// close stops what the graph owns (the authenticator's JWKS refresher).
func (g *Graph) close() { g.Auth.Close() }

// New reads c and the tenant table.
func New(ctx context.Context, c Config, d Deps) (*Runtime, error) {
	p, err := c.parse()
	if err != nil {
		return nil, err
	}
	reg, ok := d.Store.(meta.Tenants)
	if !ok {
		return nil, fmt.Errorf("the metadata store does not keep tenants (meta.Tenants)")
	}
	sealer, err := tenant.NewSealer(p.key)
	if err != nil {
		return nil, err
	}
	rt := &Runtime{cfg: c, deps: d, key: p.key, sealer: sealer, reg: reg, opts: p.opts, defHosts: p.defHosts,
		changed: make(chan struct{}, 1), labels: map[string]string{}}
	empty := map[string]*Graph{}
	rt.graphs.Store(&empty)
	d.Cache.OnTenantChanged(func(string) { rt.kick() })
	if d.Forget != nil {
		d.Cache.OnTenantGone(d.Forget)
	}
	if err := rt.Reload(ctx); err != nil {
		return nil, err
	}
	return rt, nil
}

// Sealer returns the sealer of tenants' secrets.
func (rt *Runtime) Sealer() *tenant.Sealer { return rt.sealer }

// Registry returns the tenant registry.
func (rt *Runtime) Registry() meta.Tenants { return rt.reg }

// Resolver returns the resolver of the tenant table as last read: which tenant a
// host names, which hosts are reserved.
func (rt *Runtime) Resolver() *tenant.Resolver { return rt.resolver.Load() }

// Held returns how many tenants' graphs are held.
func (rt *Runtime) Held() int { return len(*rt.graphs.Load()) }

// kick makes Run reload the tenant table now.
func (rt *Runtime) kick() {
	select {
	case rt.changed <- struct{}{}:
	default:
	}
}

// Reload reads the tenant table, rebuilds the resolver and drops the graphs of
// tenants that changed or are gone (they are built again on their next request).
// It implements service.TenantRuntime.
func (rt *Runtime) Reload(ctx context.Context) error {
	list, err := rt.reg.ListTenants(ctx)
	if err != nil {
		return err
	}
	entries := []tenant.Entry{{ID: coffer.DefaultTenantID, Hosts: rt.defHosts}}
	rows := make(map[string]*coffer.Tenant, len(list))
	for _, t := range list {
		entries = append(entries, tenant.Entry{ID: t.ID, Hosts: t.Hosts})
		rows[t.ID] = t
	}
	rs, err := tenant.NewResolver(entries, rt.opts)
	if err != nil {
		return err
	}
	rt.mu.Lock()
	defer rt.mu.Unlock()
	rt.resolver.Store(rs)
	if prev := rt.tenants.Load(); prev != nil {
		for _, id := range goneSince(*prev, rows) {
			rt.deps.Cache.DropTenant(id)
		}
	}
	rt.tenants.Store(&rows)
	old := *rt.graphs.Load()
	kept := make(map[string]*Graph, len(old))
	for id, g := range old {
		if t := rows[id]; t != nil && t.UpdatedAt.Equal(g.tenant.UpdatedAt) {
			kept[id] = g
		} else {
			g.close()
		}
	}
	rt.graphs.Store(&kept)
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

// Incarnation tells apart the tenants that have held t's id (a deleted tenant's id
// may be taken again): its creation time, in microseconds (the stores' precision).
func Incarnation(t *coffer.Tenant) string { return strconv.FormatInt(t.CreatedAt.UnixMicro(), 36) }

// DropEverywhere drops tenant id's entries from every cache of every node: this
// node's at once, the others' through the cluster bus (this node hears it too, and
// dropping twice is harmless). It implements service.TenantRuntime.
func (rt *Runtime) DropEverywhere(ctx context.Context, id string) {
	rt.deps.Cache.DropTenant(id)
	if b := rt.deps.Bus; b != nil {
		if err := b.Publish(ctx, bus.Event{Kind: bus.TenantGone, Tenant: id}); err != nil {
			rt.deps.Log.Warn("telling the other nodes a tenant was deleted failed; they drop its entries at their next reload", "tenant", id, "err", err)
		}
	}
}

// Graph returns tenant id's graph, building it on first use; nil and a client-safe
// error for a tenant that is not served (unknown, suspended, being deleted).
func (rt *Runtime) Graph(ctx context.Context, id string) (*Graph, error) {
	if g := (*rt.graphs.Load())[id]; g != nil {
		return g, servedState(g.tenant)
	}
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if g := (*rt.graphs.Load())[id]; g != nil { // built while we waited
		return g, servedState(g.tenant)
	}
	t := (*rt.tenants.Load())[id]
	if t == nil {
		return nil, errNoTenant()
	}
	if err := servedState(t); err != nil {
		return nil, err
	}
	g, err := rt.build(context.WithoutCancel(ctx), t)
	if err != nil {
		rt.deps.Log.Error("building a tenant failed", "tenant", id, "err", err)
		return nil, coffer.Errorf(coffer.EUNAVAILABLE, "this tenant cannot be served right now")
	}
	g.touch(time.Now().Unix())
	old := *rt.graphs.Load()
	next := make(map[string]*Graph, len(old)+1)
	for k, v := range old {
		next[k] = v
	}
	if len(next) >= max(rt.cfg.MaxGraphs, 1) {
		dropLeastUsed(next)
	}
	next[id] = g
	rt.graphs.Store(&next)
	return g, nil
}

// build builds tenant t's graph through Deps.Build, with its limits.
func (rt *Runtime) build(ctx context.Context, t *coffer.Tenant) (*Graph, error) {
	cfg, err := rt.settings(t)
	if err != nil {
		return nil, err
	}
	g, err := rt.deps.Build(ctx, t, cfg)
	if err != nil {
		return nil, err
	}
	g.tenant = t
	g.limit = tenant.NewRateLimiter(cfg.Limits, tenant.DefaultUserTableConfig())
	g.bw = tenant.NewBandwidth(cfg.Limits.BytesPerSecond, nil)
	return g, nil
}

// dropLeastUsed removes the least recently used graph from graphs and closes it.
// Requests in flight on it finish on it.
func dropLeastUsed(graphs map[string]*Graph) {
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

// FastGraph returns tenant id's graph for a fast-path answer, touched at now: nil
// (net/http answers) when it is not built yet, when the tenant is not served, or
// when it has request or bandwidth limits, which apply on net/http's path.
func (rt *Runtime) FastGraph(id string, now time.Time) *Graph {
	g := (*rt.graphs.Load())[id]
	if g == nil || servedState(g.tenant) != nil || g.limit != nil || g.bw != nil {
		return nil
	}
	g.touch(now.Unix())
	return g
}

// Run keeps the tenants current until ctx ends: it reloads the tenant table every
// interval and at once when another node changed a tenant (PostgreSQL), sweeps the
// built tenants' abandoned uploads and orphan blobs every sweep interval, and
// removes the data of deleted tenants in batches.
func (rt *Runtime) Run(ctx context.Context, every, sweepEvery time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	lastSweep := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-rt.changed:
		}
		if err := rt.Reload(ctx); err != nil && ctx.Err() == nil {
			rt.deps.Log.Warn("reading the tenant table failed; retrying", "err", err)
		}
		rt.PurgeDeleted(ctx)
		if time.Since(lastSweep) >= sweepEvery {
			lastSweep = time.Now()
			rt.sweep(ctx)
		}
	}
}

// sweep sweeps every built tenant's abandoned uploads and orphan blobs.
func (rt *Runtime) sweep(ctx context.Context) {
	for id, g := range *rt.graphs.Load() {
		rep, err := g.Service.Sweep(ctx, time.Now().Add(-rt.deps.StaleUploadAfter))
		if err != nil && ctx.Err() == nil {
			rt.deps.Log.Error("tenant sweep failed", "tenant", id, "err", err)
		} else if rep.AbandonedUploads+len(rep.OrphanBlobs) > 0 {
			rt.deps.Log.Info("tenant sweep", "tenant", id, "abandoned_uploads", rep.AbandonedUploads, "orphan_blobs", len(rep.OrphanBlobs))
		}
	}
}
