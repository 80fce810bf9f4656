package rpcapi

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/coffer/coffer"
	adminv1 "github.com/coffer/coffer/proto/gen/coffer/admin/v1"
	"github.com/coffer/coffer/service"
	"github.com/coffer/coffer/site/audit"
)

// AuditService: a tenant's admin reads its own tenant's records (Config.Tenant);
// the platform admin (the platform secret, checked as TenantService checks it) any
// tenant's. The use case (service.Audit) checks who may read what and bounds the
// filter; the face converts it and checks its tenant id and times.

// QueryAudit serves AuditService.QueryAudit.
func (s *server) QueryAudit(ctx context.Context, req *connect.Request[adminv1.QueryAuditRequest]) (*connect.Response[adminv1.QueryAuditResponse], error) {
	out, err := s.queryAudit(ctx, req.Header(), req.Msg)
	if err != nil {
		return nil, s.h.toConnect(ctx, err)
	}
	return connect.NewResponse(out), nil
}

// queryAudit converts the request, finds who calls and queries.
func (s *server) queryAudit(ctx context.Context, hdr http.Header, r *adminv1.QueryAuditRequest) (*adminv1.QueryAuditResponse, error) {
	if len(r.GetTenant()) > maxTenantID {
		return nil, coffer.InvalidField("tenant", fmt.Sprintf("a tenant id is at most %d characters", maxTenantID))
	}
	f, err := auditFilter(r)
	if err != nil {
		return nil, err
	}
	c := service.AuditCaller{Principal: principal(ctx), Tenant: s.h.cfg.Tenant}
	if len(hdr.Values(HeaderPlatformSecret)) > 0 {
		if err := s.h.platformCheck(ctx, hdr); err != nil {
			return nil, err
		}
		c.Platform = true
	}
	recs, err := service.Audit{Log: s.h.cfg.Audit}.Query(ctx, c, f)
	if err != nil {
		return nil, err
	}
	out := &adminv1.QueryAuditResponse{Records: make([]*adminv1.AuditRecord, len(recs))}
	for i := range recs {
		out.Records[i] = auditRecordPB(&recs[i])
	}
	return out, nil
}

// auditFilter converts a request's filter (the use case checks its bounds).
func auditFilter(r *adminv1.QueryAuditRequest) (audit.Filter, error) {
	f := audit.Filter{Tenant: r.GetTenant(), Site: r.GetSite(), Host: r.GetHost(), Path: r.GetPath(),
		Status: int(r.GetStatus()), Cache: r.GetCache(), Limit: int(r.GetLimit())}
	var err error
	if f.Since, err = auditTime("since", r.GetSince()); err != nil {
		return f, err
	}
	if f.Until, err = auditTime("until", r.GetUntil()); err != nil {
		return f, err
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
