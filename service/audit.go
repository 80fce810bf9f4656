package service

import (
	"context"
	"fmt"
	"strings"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/site/audit"
)

// Bounds of an audit query.
const (
	DefaultAuditLimit = 100   // the records a query returns when it names no limit
	MaxAuditLimit     = 10000 // the most records a query returns
	maxAuditString    = 4096  // a site, host or path glob in a filter
)

// auditCaches are the cache outcomes a filter may name (audit.Record's Cache).
var auditCaches = map[string]bool{"HIT": true, "MISS": true, "STALE": true, "REVALIDATED": true, "BYPASS": true}

// Audit is the audit use case: it reads the log of the requests sites served, for
// the platform admin any tenant's records, for a tenant's admin its own tenant's
// only. Queries cross it as audit.Filter, never wire bytes.
type Audit struct {
	Log AuditLog // nil: this server keeps no audit log
}

// AuditLog is the audit log as the audit use case sees it (the sites runtime
// implements it).
type AuditLog interface {
	// QueryAudit returns the records that match f (its Tenant "" matching any), at
	// most f.Limit, in time order; EUNAVAILABLE when the log is off on this server.
	QueryAudit(ctx context.Context, f audit.Filter) ([]audit.Record, error)
}

// AuditCaller is who queries the audit log, as the face authenticated them.
type AuditCaller struct {
	// Platform is the platform admin, whose credential the face checked: it reads any
	// tenant's records.
	Platform bool
	// Principal is the caller otherwise (nil: no credentials), who must be the admin
	// of Tenant, the tenant of the face's hosts ("" the default tenant).
	Principal *coffer.Principal
	Tenant    string
}

// Query returns the records that match f, at most f.Limit (0: DefaultAuditLimit), in
// time order. f.Tenant names the tenant read: any for the platform admin ("" the
// default tenant); for a tenant's admin its own, or "" for it (EFORBIDDEN for
// another). EUNAUTHORIZED or EFORBIDDEN for a caller who is neither, before the log
// is read; EPRECONDITION without a log; EINVALID naming the field for a bad filter.
// f.Cache is matched upper-cased.
func (a Audit) Query(ctx context.Context, c AuditCaller, f audit.Filter) ([]audit.Record, error) {
	tenant, err := c.tenant(f.Tenant)
	if err != nil {
		return nil, err
	}
	if a.Log == nil {
		return nil, coffer.Errorf(coffer.EPRECONDITION, "this server keeps no audit log")
	}
	f.Tenant = tenant
	if err := checkAuditFilter(&f); err != nil {
		return nil, err
	}
	return a.Log.QueryAudit(ctx, f)
}

// tenant returns the tenant whose records c may read when it names named.
func (c AuditCaller) tenant(named string) (string, error) {
	if c.Platform {
		return named, nil
	}
	p := c.Principal
	if p == nil {
		p = &coffer.Principal{Anonymous: true}
	}
	if err := requireAdmin(p); err != nil {
		return "", err
	}
	if named != "" && named != c.Tenant {
		return "", coffer.Errorf(coffer.EFORBIDDEN, "a tenant's admin reads its own tenant's audit log only (the platform secret reads any)")
	}
	return c.Tenant, nil
}

// checkAuditFilter checks f's bounds, upper-cases its cache outcome and sets its
// default limit.
func checkAuditFilter(f *audit.Filter) error {
	f.Cache = strings.ToUpper(f.Cache)
	for field, v := range map[string]string{"site": f.Site, "host": f.Host, "path": f.Path} {
		if len(v) > maxAuditString {
			return coffer.InvalidField(field, fmt.Sprintf("at most %d bytes", maxAuditString))
		}
	}
	switch {
	case f.Limit == 0:
		f.Limit = DefaultAuditLimit
	case f.Limit < 0 || f.Limit > MaxAuditLimit:
		return coffer.InvalidField("limit", fmt.Sprintf("limit is 1 to %d (0 for %d)", MaxAuditLimit, DefaultAuditLimit))
	}
	if f.Status != 0 && (f.Status < 100 || f.Status > 599) {
		return coffer.InvalidField("status", "a status is 100 to 599 (0 for any)")
	}
	if f.Cache != "" && !auditCaches[f.Cache] {
		return coffer.InvalidField("cache", "cache is HIT, MISS, STALE, REVALIDATED or BYPASS")
	}
	if !f.Since.IsZero() && !f.Until.IsZero() && f.Since.After(f.Until) {
		return coffer.InvalidField("since", "since is after until")
	}
	return nil
}
