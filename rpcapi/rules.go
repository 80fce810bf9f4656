package rpcapi

import (
	"context"

	"connectrpc.com/connect"

	adminv1 "github.com/coffer/coffer/proto/gen/coffer/admin/v1"
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
