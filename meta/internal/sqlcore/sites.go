package sqlcore

import (
	"context"
	"slices"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/meta"
)

const siteCols = `tenant_id, id, doc, created_at, updated_at`

// scanSite reads a row of siteCols; its Hosts start empty.
func scanSite(r Row) (*coffer.Site, error) {
	var st coffer.Site
	err := r.Scan(&st.TenantID, &st.ID, &st.Doc, Time{&st.CreatedAt}, Time{&st.UpdatedAt})
	st.Hosts = []string{}
	if st.Doc == nil { // an empty document reads back as NULL's nil
		st.Doc = []byte{}
	}
	return &st, err
}

func siteNotFound(id string) error {
	return coffer.Errorf(coffer.ENOTFOUND, "site %q not found", id)
}

// cloneDoc returns a copy of doc, never nil.
func cloneDoc(doc []byte) []byte {
	if doc == nil {
		return []byte{}
	}
	return slices.Clone(doc)
}

// CreateSite stores site for s's tenant with its hosts, in one transaction (see
// meta.Sites).
func (s *Store) CreateSite(ctx context.Context, site *coffer.Site) error {
	ns := *site
	ns.TenantID = s.tenant
	ns.Hosts = uniqueHosts(site.Hosts)
	ns.Doc = cloneDoc(site.Doc)
	ns.CreatedAt = meta.Now()
	ns.UpdatedAt = ns.CreatedAt
	err := s.write(ctx, "create site", func(tx Querier) error {
		_, err := tx.Exec(ctx, `INSERT INTO sites (`+siteCols+`) VALUES (?, ?, ?, ?, ?)`,
			s.tenant, ns.ID, ns.Doc, s.d.Time(ns.CreatedAt), s.d.Time(ns.UpdatedAt))
		if s.d.Unique(err) {
			return coffer.Errorf(coffer.ECONFLICT, "site %q already exists", ns.ID)
		}
		if err != nil {
			return err
		}
		return s.insertSiteHosts(ctx, tx, ns.ID, ns.Hosts)
	})
	if err == nil {
		*site = ns
	}
	return err
}

// lockHosts takes the dialect's host lock, if it has one, in tx.
func (s *Store) lockHosts(ctx context.Context, tx Querier) error {
	if s.d.HostLock == "" {
		return nil
	}
	_, err := tx.Exec(ctx, s.d.HostLock)
	return err
}

// insertSiteHosts gives hosts to site id of s's tenant: ECONFLICT naming the first
// host that is a tenant's API host or another site's.
func (s *Store) insertSiteHosts(ctx context.Context, tx Querier, id string, hosts []string) error {
	return s.takeHosts(ctx, tx, hosts, hostTable{
		insert: `INSERT INTO site_hosts (host, tenant_id, site_id) VALUES (?, ?, ?)`,
		taken:  "belongs to another site",
		other:  "tenant_hosts", otherTaken: "is a tenant's API host",
	}, s.tenant, id)
}

// hostTable is where a kind of host is kept, and the other table a host must not be in.
type hostTable struct {
	insert string // inserts a host: its arguments are the host, then takeHosts' args
	taken  string // the conflict's words when insert's key refuses the host
	// other is the table (with a host column) of the other kind; otherTaken the
	// conflict's words when the host is in it
	other, otherTaken string
}

// takeHosts inserts each of hosts with ht.insert, under the dialect's host lock:
// ECONFLICT naming the first that ht.other holds or that ht.insert's key refuses.
func (s *Store) takeHosts(ctx context.Context, tx Querier, hosts []string, ht hostTable, args ...any) error {
	if err := s.lockHosts(ctx, tx); err != nil {
		return err
	}
	for _, h := range hosts {
		var other bool
		err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM `+ht.other+` WHERE host = ?)`, h).Scan(&other)
		if err != nil {
			return err
		}
		if other {
			return coffer.Errorf(coffer.ECONFLICT, "host %q %s", h, ht.otherTaken)
		}
		_, err = tx.Exec(ctx, ht.insert, append([]any{h}, args...)...)
		if s.d.Unique(err) {
			return coffer.Errorf(coffer.ECONFLICT, "host %q %s", h, ht.taken)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// GetSite returns ENOTFOUND if s's tenant has no such site.
func (s *Store) GetSite(ctx context.Context, id string) (*coffer.Site, error) {
	return s.getSite(ctx, s.db, id, "")
}

// getSite reads site id of s's tenant and its hosts; lock is "" or s.d.ForUpdate.
func (s *Store) getSite(ctx context.Context, q Querier, id, lock string) (*coffer.Site, error) {
	st, err := scanSite(q.QueryRow(ctx, `SELECT `+siteCols+` FROM sites WHERE tenant_id = ? AND id = ?`+lock,
		s.tenant, id))
	if IsNoRows(err) {
		return nil, siteNotFound(id)
	}
	if err != nil {
		return nil, s.err(err, "get site")
	}
	rows, err := q.Query(ctx, `SELECT host FROM site_hosts WHERE tenant_id = ? AND site_id = ? ORDER BY host`,
		s.tenant, id)
	st.Hosts, err = Collect(rows, err, func(r Row) (h string, err error) { return h, r.Scan(&h) })
	return st, s.err(err, "get site hosts")
}

// ListSites returns s's tenant's sites ordered by id, with their hosts.
func (s *Store) ListSites(ctx context.Context) ([]*coffer.Site, error) {
	rows, err := s.db.Query(ctx, `SELECT `+siteCols+` FROM sites WHERE tenant_id = ? ORDER BY id`, s.tenant)
	out, err := Collect(rows, err, scanSite)
	if err != nil {
		return nil, s.err(err, "list sites")
	}
	rows, err = s.db.Query(ctx, `SELECT tenant_id, site_id, host FROM site_hosts WHERE tenant_id = ?
		ORDER BY host`, s.tenant)
	return out, s.err(attachHosts(out, rows, err), "list site hosts")
}

// AllSites returns every tenant's sites ordered by (tenant, id), with their hosts
// (see meta.SiteRegistry).
func (s *Store) AllSites(ctx context.Context) ([]*coffer.Site, error) {
	rows, err := s.db.Query(ctx, `SELECT `+siteCols+` FROM sites ORDER BY tenant_id, id`)
	out, err := Collect(rows, err, scanSite)
	if err != nil {
		return nil, s.err(err, "list all sites")
	}
	rows, err = s.db.Query(ctx, `SELECT tenant_id, site_id, host FROM site_hosts ORDER BY host`)
	return out, s.err(attachHosts(out, rows, err), "list all site hosts")
}

// attachHosts appends each row of rows (tenant_id, site_id, host; err is the
// query's error) to the Hosts of its site in sites.
func attachHosts(sites []*coffer.Site, rows Rows, err error) error {
	type key struct{ tenant, id string }
	byKey := make(map[key]*coffer.Site, len(sites))
	for _, st := range sites {
		byKey[key{st.TenantID, st.ID}] = st
	}
	_, err = Collect(rows, err, func(r Row) (struct{}, error) {
		var k key
		var h string
		if err := r.Scan(&k.tenant, &k.id, &h); err != nil {
			return struct{}{}, err
		}
		if st := byKey[k]; st != nil {
			st.Hosts = append(st.Hosts, h)
		}
		return struct{}{}, nil
	})
	return err
}

// UpdateSite replaces site id's hosts and document and bumps UpdatedAt (see
// meta.Sites).
func (s *Store) UpdateSite(ctx context.Context, id string, hosts []string, doc []byte) (*coffer.Site, error) {
	var st *coffer.Site
	err := s.write(ctx, "update site", func(tx Querier) error {
		var err error
		if st, err = s.getSite(ctx, tx, id, s.d.ForUpdate); err != nil {
			return err
		}
		st.Hosts, st.Doc, st.UpdatedAt = uniqueHosts(hosts), cloneDoc(doc), meta.Now()
		_, err = tx.Exec(ctx, `UPDATE sites SET doc = ?, updated_at = ? WHERE tenant_id = ? AND id = ?`,
			st.Doc, s.d.Time(st.UpdatedAt), s.tenant, id)
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `DELETE FROM site_hosts WHERE tenant_id = ? AND site_id = ?`, s.tenant, id)
		if err != nil {
			return err
		}
		return s.insertSiteHosts(ctx, tx, id, st.Hosts)
	})
	if err != nil {
		return nil, err
	}
	return st, nil
}

// DeleteSite removes site id of s's tenant with its hosts; ENOTFOUND if missing.
func (s *Store) DeleteSite(ctx context.Context, id string) error {
	return s.write(ctx, "delete site", func(tx Querier) error {
		_, err := tx.Exec(ctx, `DELETE FROM site_hosts WHERE tenant_id = ? AND site_id = ?`, s.tenant, id)
		if err != nil {
			return err
		}
		n, err := tx.Exec(ctx, `DELETE FROM sites WHERE tenant_id = ? AND id = ?`, s.tenant, id)
		if err == nil && n == 0 {
			err = siteNotFound(id)
		}
		return err
	})
}
