package sqlcore

import (
	"context"
	"slices"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/meta"
)

// Scoped is what one tenant's view offers: the store, its outbox, rejections, usage
// and sites, and nothing of the registries.
type Scoped interface {
	meta.Store
	meta.Outbox
	meta.Rejections
	meta.Usage
	meta.Sites
}

// view hides every method of a *Store but Scoped's.
type view struct{ Scoped }

// ForTenant returns tenant id's view over the same connections (see meta.Tenanted):
// as cheap as two pointers, made per request if need be. Its Close does nothing.
func (s *Store) ForTenant(id string) meta.Store {
	return view{s.forTenant(id)}
}

// forTenant returns the core store of tenant id, sharing s's connections and hooks.
func (s *Store) forTenant(id string) *Store {
	return &Store{shared: s.shared, tenant: id}
}

// Ping checks the connection.
func (s *Store) Ping(ctx context.Context) error {
	return s.err(s.db.Ping(ctx), "ping "+s.d.Name)
}

// Close does nothing: the engine's store owns the connections (and closes them with
// its own Close).
func (s *Store) Close() error { return nil }

// Usage returns the tenant's stored usage: the sum of its tenant_usage rows (kept by
// the usage triggers; see the tenants migrations); zero when it never stored a file.
func (s *Store) Usage(ctx context.Context) (coffer.Usage, error) {
	var u coffer.Usage
	err := s.db.QueryRow(ctx, `SELECT coalesce(sum(bytes), 0), coalesce(sum(files), 0) FROM tenant_usage
		WHERE tenant_id = ?`, s.tenant).Scan(&u.Bytes, &u.Files)
	return u, s.err(err, "get usage")
}

const tenantCols = `id, settings, state, max_bytes, max_files, created_at, updated_at`

// scanTenant reads a row of tenantCols.
func scanTenant(r Row) (*coffer.Tenant, error) {
	var t coffer.Tenant
	var state string
	err := r.Scan(&t.ID, &t.Settings, &state, &t.Quota.MaxBytes, &t.Quota.MaxFiles,
		Time{&t.CreatedAt}, Time{&t.UpdatedAt})
	t.State = coffer.TenantState(state)
	t.Hosts = []string{}
	if t.Settings == nil { // an empty document reads back as NULL's nil
		t.Settings = []byte{}
	}
	return &t, err
}

func tenantNotFound(id string) error {
	return coffer.Errorf(coffer.ENOTFOUND, "tenant %q not found", id)
}

// checkTenantID refuses the default tenant's id, which no registry row may have.
func checkTenantID(id string) error {
	if id == coffer.DefaultTenantID {
		return coffer.Errorf(coffer.EINVALID, "the default tenant is not in the registry")
	}
	return nil
}

// CreateTenant stores t with its hosts and its default bucket, in one
// transaction (see meta.Tenants): a new tenant starts as a new deployment does.
func (s *Store) CreateTenant(ctx context.Context, t *coffer.Tenant) error {
	if err := checkTenantID(t.ID); err != nil {
		return err
	}
	nt := *t
	if nt.State == "" {
		nt.State = coffer.TenantActive
	}
	if nt.Settings == nil {
		nt.Settings = []byte{}
	}
	nt.Hosts = uniqueHosts(t.Hosts)
	nt.CreatedAt = meta.Now()
	nt.UpdatedAt = nt.CreatedAt
	err := s.write(ctx, "create tenant", func(tx Querier) error {
		_, err := tx.Exec(ctx, `INSERT INTO tenants (`+tenantCols+`) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			nt.ID, nt.Settings, string(nt.State), nt.Quota.MaxBytes, nt.Quota.MaxFiles,
			s.d.Time(nt.CreatedAt), s.d.Time(nt.UpdatedAt))
		if s.d.Unique(err) {
			return coffer.Errorf(coffer.ECONFLICT, "tenant %q already exists", nt.ID)
		}
		if err != nil {
			return err
		}
		if err := s.insertHosts(ctx, tx, nt.ID, nt.Hosts); err != nil {
			return err
		}
		return s.forTenant(nt.ID).insertDefaultBucket(ctx, tx)
	})
	if err == nil {
		*t = nt
	}
	return err
}

// uniqueHosts returns hosts sorted, without repeats, never nil.
func uniqueHosts(hosts []string) []string {
	out := slices.Clone(hosts)
	slices.Sort(out)
	out = slices.Compact(out)
	if out == nil {
		out = []string{}
	}
	return out
}

// insertHosts gives hosts to tenant id: ECONFLICT naming the first host another
// tenant or a site has.
func (s *Store) insertHosts(ctx context.Context, tx Querier, id string, hosts []string) error {
	return s.takeHosts(ctx, tx, hosts, hostTable{
		insert: `INSERT INTO tenant_hosts (host, tenant_id) VALUES (?, ?)`,
		taken:  "belongs to another tenant",
		other:  "site_hosts", otherTaken: "belongs to a site",
	}, id)
}

// GetTenant returns ENOTFOUND if there is no such tenant.
func (s *Store) GetTenant(ctx context.Context, id string) (*coffer.Tenant, error) {
	return s.getTenant(ctx, s.db, id, "")
}

// getTenant reads tenant id and its hosts; lock is "" or s.d.ForUpdate.
func (s *Store) getTenant(ctx context.Context, q Querier, id, lock string) (*coffer.Tenant, error) {
	t, err := scanTenant(q.QueryRow(ctx, `SELECT `+tenantCols+` FROM tenants WHERE id = ?`+lock, id))
	if IsNoRows(err) {
		return nil, tenantNotFound(id)
	}
	if err != nil {
		return nil, s.err(err, "get tenant")
	}
	rows, err := q.Query(ctx, `SELECT host FROM tenant_hosts WHERE tenant_id = ? ORDER BY host`, id)
	t.Hosts, err = Collect(rows, err, func(r Row) (h string, err error) { return h, r.Scan(&h) })
	return t, s.err(err, "get tenant hosts")
}

// ListTenants returns every tenant ordered by id, with its hosts.
func (s *Store) ListTenants(ctx context.Context) ([]*coffer.Tenant, error) {
	rows, err := s.db.Query(ctx, `SELECT `+tenantCols+` FROM tenants ORDER BY id`)
	out, err := Collect(rows, err, scanTenant)
	if err != nil {
		return nil, s.err(err, "list tenants")
	}
	byID := make(map[string]*coffer.Tenant, len(out))
	for _, t := range out {
		byID[t.ID] = t
	}
	rows, err = s.db.Query(ctx, `SELECT tenant_id, host FROM tenant_hosts ORDER BY host`)
	_, err = Collect(rows, err, func(r Row) (struct{}, error) {
		var id, h string
		if err := r.Scan(&id, &h); err != nil {
			return struct{}{}, err
		}
		if t := byID[id]; t != nil {
			t.Hosts = append(t.Hosts, h)
		}
		return struct{}{}, nil
	})
	return out, s.err(err, "list tenant hosts")
}

// UpdateTenant applies u and bumps UpdatedAt; ENOTFOUND if missing, ECONFLICT if a
// new host is another tenant's.
func (s *Store) UpdateTenant(ctx context.Context, id string, u coffer.TenantUpdate) (*coffer.Tenant, error) {
	var t *coffer.Tenant
	err := s.write(ctx, "update tenant", func(tx Querier) error {
		var err error
		if t, err = s.getTenant(ctx, tx, id, s.d.ForUpdate); err != nil {
			return err
		}
		applyTenant(t, u)
		t.UpdatedAt = meta.Now()
		_, err = tx.Exec(ctx, `UPDATE tenants SET settings = ?, state = ?, max_bytes = ?, max_files = ?,
			updated_at = ? WHERE id = ?`, t.Settings, string(t.State), t.Quota.MaxBytes, t.Quota.MaxFiles,
			s.d.Time(t.UpdatedAt), id)
		if err != nil || u.Hosts == nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM tenant_hosts WHERE tenant_id = ?`, id); err != nil {
			return err
		}
		return s.insertHosts(ctx, tx, id, t.Hosts)
	})
	if err != nil {
		return nil, err
	}
	return t, nil
}

// applyTenant sets the fields of t that u changes.
func applyTenant(t *coffer.Tenant, u coffer.TenantUpdate) {
	if u.Hosts != nil {
		t.Hosts = uniqueHosts(*u.Hosts)
	}
	if u.Settings != nil {
		t.Settings = slices.Clone(*u.Settings)
		if t.Settings == nil {
			t.Settings = []byte{}
		}
	}
	if u.State != nil {
		t.State = *u.State
	}
	if u.Quota != nil {
		t.Quota = *u.Quota
	}
}
