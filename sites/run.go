package sites

import (
	"bytes"
	"context"
	"path"
	"strings"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/bus"
	"github.com/coffer/coffer/site"
)

// reload reads every tenant's sites and installs the host map. A site whose
// document and update time are unchanged keeps its compiled form (and so its
// origins' circuit breakers); one that no longer compiles is left out and logged,
// without taking the others down.
func (st *Runtime) reload(ctx context.Context) error {
	rows, err := st.reg.AllSites(ctx)
	if err != nil {
		return err
	}
	old := st.hosts.Load()
	m := &siteMap{byHost: map[string]*siteEntry{}, byTenant: map[string][]*siteEntry{}}
	for _, row := range rows {
		e := st.reuse(old, row)
		if e == nil {
			if e, err = st.compile(row); err != nil {
				st.log.Error("site left out: it does not compile", "tenant", row.TenantID, "site", row.ID, "err", err)
				continue
			}
		}
		for _, h := range row.Hosts {
			m.byHost[h] = e
		}
		m.byTenant[row.TenantID] = append(m.byTenant[row.TenantID], e)
	}
	st.hosts.Store(m)
	return nil
}

// reuse returns old's entry for row when row has not changed since it was compiled.
func (st *Runtime) reuse(old *siteMap, row *coffer.Site) *siteEntry {
	if old == nil {
		return nil
	}
	for _, e := range old.byTenant[row.TenantID] {
		if e.row.ID == row.ID && e.row.UpdatedAt.Equal(row.UpdatedAt) && bytes.Equal(e.row.Doc, row.Doc) {
			return e
		}
	}
	return nil
}

// compile parses and compiles a stored site.
func (st *Runtime) compile(row *coffer.Site) (*siteEntry, error) {
	doc, err := site.Parse(row.Doc)
	if err != nil {
		return nil, err
	}
	c, err := site.Compile(doc, row.TenantID, originFactory{st: st, site: row.ID})
	if err != nil {
		return nil, err
	}
	return &siteEntry{tenant: row.TenantID, row: row, doc: doc, compiled: c}, nil
}

// entry returns tenant's site id, nil if there is none.
func (st *Runtime) entry(tenant, id string) *siteEntry {
	if m := st.hosts.Load(); m != nil {
		for _, e := range m.byTenant[tenant] {
			if e.row.ID == id {
				return e
			}
		}
	}
	return nil
}

// Changed wakes Run to read the sites again at once: a tenant's sites changed on
// another node (the metadata cache's OnSitesChanged).
func (st *Runtime) Changed() {
	select {
	case st.kick <- struct{}{}:
	default:
	}
}

// Run keeps the sites current until ctx ends: every Refresh, and at once when a
// site changes (here, or on another node through the bus).
func (st *Runtime) Run(ctx context.Context) {
	t := time.NewTicker(st.cfg.Refresh)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-st.kick:
		}
		if err := st.reload(ctx); err != nil && ctx.Err() == nil {
			st.log.Warn("reading the sites failed; retrying", "err", err)
		}
	}
}

// purge applies p to tenant's site here; from this node's own request or change
// (origin), it also tells the other nodes and the site's purge webhooks. It returns
// the edge entries removed here and whether other nodes were told.
func (st *Runtime) purge(ctx context.Context, tenant, id string, p site.Purge, origin bool) (int, bool) {
	removed := st.edge.Purge(tenant+"/"+id, withSiblings(p))
	st.dropNames(tenant, id, p)
	if !origin {
		return removed, false
	}
	told := st.broadcast(ctx, bus.Event{Kind: bus.SitePurged, Tenant: tenant, ID: id, Purge: bus.Purge(p)})
	if e := st.entry(tenant, id); e != nil && len(e.doc.PurgeWebhooks) > 0 {
		st.tellWebhooks(e, p)
	}
	return removed, told
}

// broadcast sends purge e to the other nodes, as a purge of the whole site if it is
// too long for the bus; false on one node or if it failed (logged).
func (st *Runtime) broadcast(ctx context.Context, e bus.Event) bool {
	if st.opt.Bus == nil {
		return false
	}
	if p, err := bus.Encode(e); err == nil && len(p) > bus.MaxPayload {
		e.Purge = bus.Purge{}
	}
	if err := st.opt.Bus.Publish(ctx, e); err != nil {
		st.log.Warn("site purge not broadcast", "tenant", e.Tenant, "site", e.ID, "err", err)
		return false
	}
	return true
}

// withSiblings adds to p's paths their precompressed siblings' paths, which the
// edge keeps under the document's path plus the sibling's extension.
func withSiblings(p site.Purge) site.Purge {
	if len(p.Paths) == 0 {
		return p
	}
	paths := make([]string, 0, len(p.Paths)*(1+len(siblingExts)))
	for _, pth := range p.Paths {
		paths = append(paths, pth)
		for _, ext := range siblingExts {
			paths = append(paths, pth+ext)
		}
	}
	p.Paths = paths
	return p
}

// Heard applies a purge another node broadcast (the metadata cache's OnPurge).
func (st *Runtime) Heard(tenant, id string, p bus.Purge) {
	st.purge(context.Background(), tenant, id, site.Purge(p), false)
}

// dropNames forgets the bucket names a purge covers: those of its paths exactly,
// every name of the tenant for a purge by prefix, tag or of the whole site.
func (st *Runtime) dropNames(tenant, id string, p site.Purge) {
	e := st.entry(tenant, id)
	if e == nil || len(p.Prefixes) > 0 || len(p.Tags) > 0 || len(p.Paths) == 0 {
		st.names.dropTenant(tenant)
		return
	}
	for _, pth := range p.Paths {
		for _, k := range bucketKeys(e.compiled, pth) {
			st.names.drop(tenant, k.bucket, k.key)
		}
	}
}

// FileWritten purges, on every site of tenant serving the files' bucket, the paths
// of the names written (a replace, a rename, a delete, a new file under a name
// that was missing): cluster-wide and to the sites' purge webhooks (the metadata
// cache's OnFileWritten).
func (st *Runtime) FileWritten(tenant string, files []*coffer.File) {
	m := st.hosts.Load()
	if m == nil || len(m.byTenant[tenant]) == 0 {
		return
	}
	for _, e := range m.byTenant[tenant] {
		var paths []string
		for _, f := range files {
			paths = append(paths, pathsOf(e.compiled, f.BucketID, f.Name)...)
			if base := siblingBase(f.Name); base != f.Name {
				paths = append(paths, pathsOf(e.compiled, f.BucketID, base)...)
			}
		}
		if len(paths) > 0 {
			st.purge(context.Background(), tenant, e.row.ID, site.Purge{Paths: dedupe(paths)}, true)
		}
	}
}

// siblingBase is the name a precompressed sibling ("app.js.br") stands for.
func siblingBase(name string) string {
	for _, ext := range []string{".br", ".zst", ".gz"} {
		if b, ok := strings.CutSuffix(name, ext); ok && path.Ext(b) != "" {
			return b
		}
	}
	return name
}

// dedupe returns list without repeats, in order.
func dedupe(list []string) []string {
	seen := make(map[string]bool, len(list))
	out := list[:0]
	for _, s := range list {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
