package rpcapi

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/coffer/coffer"
	adminv1 "github.com/coffer/coffer/proto/gen/coffer/admin/v1"
	"github.com/coffer/coffer/site/audit"
)

// AuditService: a tenant's admin reads its own tenant's records (Config.Tenant);
// the platform admin (the platform secret, checked as TenantService checks it) any
// tenant's. The filter is bounded here and passed to Config.Audit.
const (
	defaultAuditLimit = 100
	maxAuditLimit     = 10000
	maxAuditString    = 4096 // a site, host, path glob or tenant in a filter
)

// auditCaches are the cache outcomes a filter may name (audit.Record's Cache).
var auditCaches = map[string]bool{"HIT": true, "MISS": true, "STALE": true, "REVALIDATED": true, "BYPASS": true}

// QueryAudit serves AuditService.QueryAudit.
func (s *server) QueryAudit(ctx context.Context, req *connect.Request[adminv1.QueryAuditRequest]) (*connect.Response[adminv1.QueryAuditResponse], error) {
	out, err := s.queryAudit(ctx, req.Header(), req.Msg)
	if err != nil {
		return nil, s.h.toConnect(ctx, err)
	}
	return connect.NewResponse(out), nil
}

// queryAudit admits the caller for the tenant asked, checks the filter and queries.
func (s *server) queryAudit(ctx context.Context, hdr http.Header, r *adminv1.QueryAuditRequest) (*adminv1.QueryAuditResponse, error) {
	tenant, err := s.auditTenant(ctx, hdr, r.GetTenant())
	if err != nil {
		return nil, err
	}
	if s.h.cfg.Audit == nil {
		return nil, coffer.Errorf(coffer.EPRECONDITION, "this server keeps no audit log")
	}
	f, err := auditFilter(r)
	if err != nil {
		return nil, err
	}
	recs, err := s.h.cfg.Audit.QueryAudit(ctx, tenant, f)
	if err != nil {
		return nil, err
	}
	out := &adminv1.QueryAuditResponse{Records: make([]*adminv1.AuditRecord, len(recs))}
	for i := range recs {
		out.Records[i] = auditRecordPB(&recs[i])
	}
	return out, nil
}

// auditTenant returns the tenant whose records the caller of ctx may read: with the
// platform secret (hdr), the one named ("" the default tenant); else, for the
// face's tenant's admin, that tenant, EFORBIDDEN if another is named.
func (s *server) auditTenant(ctx context.Context, hdr http.Header, named string) (string, error) {
	if len(named) > maxTenantID {
		return "", coffer.InvalidField("tenant", fmt.Sprintf("a tenant id is at most %d characters", maxTenantID))
	}
	if len(hdr.Values(HeaderPlatformSecret)) > 0 {
		if err := s.h.platformCheck(ctx, hdr); err != nil {
			return "", err
		}
		return named, nil
	}
	if err := requireAdmin(principal(ctx)); err != nil {
		return "", err
	}
	if named != "" && named != s.h.cfg.Tenant {
		return "", coffer.Errorf(coffer.EFORBIDDEN, "a tenant's admin reads its own tenant's audit log only (the platform secret reads any)")
	}
	return s.h.cfg.Tenant, nil
}

// auditFilter converts and checks a request's filter.
func auditFilter(r *adminv1.QueryAuditRequest) (AuditFilter, error) {
	f := AuditFilter{Site: r.GetSite(), Host: r.GetHost(), Path: r.GetPath(), Status: int(r.GetStatus()),
		Cache: strings.ToUpper(r.GetCache()), Limit: int(r.GetLimit())}
	for field, v := range map[string]string{"site": f.Site, "host": f.Host, "path": f.Path} {
		if len(v) > maxAuditString {
			return f, coffer.InvalidField(field, fmt.Sprintf("at most %d bytes", maxAuditString))
		}
	}
	switch {
	case f.Limit == 0:
		f.Limit = defaultAuditLimit
	case f.Limit < 0 || f.Limit > maxAuditLimit:
		return f, coffer.InvalidField("limit", fmt.Sprintf("limit is 1 to %d (0 for %d)", maxAuditLimit, defaultAuditLimit))
	}
	if f.Status != 0 && (f.Status < 100 || f.Status > 599) {
		return f, coffer.InvalidField("status", "a status is 100 to 599 (0 for any)")
	}
	if f.Cache != "" && !auditCaches[f.Cache] {
		return f, coffer.InvalidField("cache", "cache is HIT, MISS, STALE, REVALIDATED or BYPASS")
	}
	var err error
	if f.Since, err = auditTime("since", r.GetSince()); err != nil {
		return f, err
	}
	if f.Until, err = auditTime("until", r.GetUntil()); err != nil {
		return f, err
	}
	if !f.Since.IsZero() && !f.Until.IsZero() && f.Since.After(f.Until) {
		return f, coffer.InvalidField("since", "since is after until")
	}
	return f, nil
}

// auditTime converts a filter's time: zero when unset, EINVALID naming field when
// out of range.
func auditTime(field string, ts *timestamppb.Timestamp) (t time.Time, err error) {
	if ts == nil {
		return t, nil
	}
	if err := ts.CheckValid(); err != nil {
		return t, coffer.InvalidField(field, "not a valid time")
	}
	return ts.AsTime(), nil
}

// auditRecordPB converts a record.
func auditRecordPB(r *audit.Record) *adminv1.AuditRecord {
	return &adminv1.AuditRecord{Time: timestamppb.New(r.Time), Tenant: r.Tenant, Site: r.Site, Host: r.Host,
		Method: r.Method, Path: r.Path, Target: r.Target, Status: int32(r.Status), Bytes: r.Bytes,
		DurationMs: r.Duration, Cache: r.Cache, Client: r.Client, UserId: r.UserID, RequestId: r.RequestID}
}
