package rpcapi

import (
	"context"
	"encoding/json"

	"connectrpc.com/connect"

	adminv1 "github.com/coffer/coffer/proto/gen/coffer/admin/v1"
	"github.com/coffer/coffer/service"
)

// GetRules serves RuleService.GetRules.
func (s *server) GetRules(ctx context.Context, _ *connect.Request[adminv1.GetRulesRequest]) (*connect.Response[adminv1.GetRulesResponse], error) {
	doc, err := s.h.svc.Rules(principal(ctx))
	if err != nil {
		return nil, s.h.toConnect(ctx, err)
	}
	return connect.NewResponse(&adminv1.GetRulesResponse{Document: string(doc)}), nil
}

// ValidateRules serves RuleService.ValidateRules.
func (s *server) ValidateRules(ctx context.Context, req *connect.Request[adminv1.ValidateRulesRequest]) (*connect.Response[adminv1.ValidateRulesResponse], error) {
	doc, err := s.h.svc.ValidateRules(principal(ctx), []byte(req.Msg.GetDocument()))
	if err != nil {
		return nil, s.h.toConnect(ctx, err)
	}
	return connect.NewResponse(&adminv1.ValidateRulesResponse{Document: string(doc)}), nil
}

// PutRules serves RuleService.PutRules.
func (s *server) PutRules(ctx context.Context, req *connect.Request[adminv1.PutRulesRequest]) (*connect.Response[adminv1.PutRulesResponse], error) {
	p := principal(ctx)
	if err := s.h.svc.SetRules(ctx, p, []byte(req.Msg.GetDocument())); err != nil {
		return nil, s.h.toConnect(ctx, err)
	}
	doc, err := s.h.svc.Rules(p)
	if err != nil {
		return nil, s.h.toConnect(ctx, err)
	}
	return connect.NewResponse(&adminv1.PutRulesResponse{Document: string(doc)}), nil
}

// CheckAccess serves RuleService.CheckAccess.
func (s *server) CheckAccess(ctx context.Context, req *connect.Request[adminv1.CheckAccessRequest]) (*connect.Response[adminv1.CheckAccessResponse], error) {
	m := req.Msg
	q := service.AccessQuery{Role: m.GetRole(), UserID: m.GetUserId(), Session: m.GetSession(), BucketID: m.GetBucketId(),
		Action: m.GetAction(), FileID: m.GetFileId(), Name: m.GetName(), Size: m.GetSize(), MimeType: m.GetMimeType()}
	if m.GetMetadataJson() != "" {
		q.Metadata = json.RawMessage(m.GetMetadataJson())
	}
	ans, err := s.h.svc.CheckAccess(ctx, principal(ctx), q)
	if err != nil {
		return nil, s.h.toConnect(ctx, err)
	}
	return connect.NewResponse(&adminv1.CheckAccessResponse{Allowed: ans.Allowed, Rule: ans.Rule, Reason: ans.Reason}), nil
}
