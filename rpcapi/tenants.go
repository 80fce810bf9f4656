package rpcapi

import (
	"context"

	"connectrpc.com/connect"

	"github.com/coffer/coffer"
	adminv1 "github.com/coffer/coffer/proto/gen/coffer/admin/v1"
	"github.com/coffer/coffer/tenant"
)

// TenantService's methods. The gate (handler.go) has admitted the call (the platform
// secret, and Config.Tenants set) before any of them runs; each bounds its input
// (tenantconv.go), calls Config.Tenants once and answers without secrets.

// CreateTenant serves TenantService.CreateTenant.
func (s *server) CreateTenant(ctx context.Context, req *connect.Request[adminv1.CreateTenantRequest]) (*connect.Response[adminv1.CreateTenantResponse], error) {
	t, err := newTenant(req.Msg)
	if err != nil {
		return nil, s.h.toConnect(ctx, err)
	}
	made, err := s.h.cfg.Tenants.Create(ctx, t)
	if err != nil {
		return nil, s.h.toConnect(ctx, err)
	}
	return connect.NewResponse(&adminv1.CreateTenantResponse{Tenant: tenantPB(made)}), nil
}

// GetTenant serves TenantService.GetTenant.
func (s *server) GetTenant(ctx context.Context, req *connect.Request[adminv1.GetTenantRequest]) (*connect.Response[adminv1.GetTenantResponse], error) {
	pb, err := s.tenantAnswer(ctx, req.Msg.GetId(), func(id string) (*tenant.View, error) { return s.h.cfg.Tenants.Get(ctx, id) })
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&adminv1.GetTenantResponse{Tenant: pb}), nil
}

// ListTenants serves TenantService.ListTenants: a page of the registry's list.
func (s *server) ListTenants(ctx context.Context, req *connect.Request[adminv1.ListTenantsRequest]) (*connect.Response[adminv1.ListTenantsResponse], error) {
	size, after, err := tenantPageArgs(req.Msg)
	if err != nil {
		return nil, s.h.toConnect(ctx, err)
	}
	all, err := s.h.cfg.Tenants.List(ctx)
	if err != nil {
		return nil, s.h.toConnect(ctx, err)
	}
	return connect.NewResponse(tenantPage(all, size, after)), nil
}

// UpdateTenant serves TenantService.UpdateTenant.
func (s *server) UpdateTenant(ctx context.Context, req *connect.Request[adminv1.UpdateTenantRequest]) (*connect.Response[adminv1.UpdateTenantResponse], error) {
	u, err := tenantUpdate(req.Msg)
	if err != nil {
		return nil, s.h.toConnect(ctx, err)
	}
	pb, err := s.tenantAnswer(ctx, req.Msg.GetId(), func(id string) (*tenant.View, error) { return s.h.cfg.Tenants.Update(ctx, id, u) })
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&adminv1.UpdateTenantResponse{Tenant: pb}), nil
}

// SuspendTenant serves TenantService.SuspendTenant.
func (s *server) SuspendTenant(ctx context.Context, req *connect.Request[adminv1.SuspendTenantRequest]) (*connect.Response[adminv1.SuspendTenantResponse], error) {
	pb, err := s.setState(ctx, req.Msg.GetId(), coffer.TenantSuspended)
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&adminv1.SuspendTenantResponse{Tenant: pb}), nil
}

// ResumeTenant serves TenantService.ResumeTenant.
func (s *server) ResumeTenant(ctx context.Context, req *connect.Request[adminv1.ResumeTenantRequest]) (*connect.Response[adminv1.ResumeTenantResponse], error) {
	pb, err := s.setState(ctx, req.Msg.GetId(), coffer.TenantActive)
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&adminv1.ResumeTenantResponse{Tenant: pb}), nil
}

// setState puts tenant id in state and converts it.
func (s *server) setState(ctx context.Context, id string, state coffer.TenantState) (*adminv1.Tenant, error) {
	return s.tenantAnswer(ctx, id, func(id string) (*tenant.View, error) { return s.h.cfg.Tenants.SetState(ctx, id, state) })
}

// DeleteTenant serves TenantService.DeleteTenant.
func (s *server) DeleteTenant(ctx context.Context, req *connect.Request[adminv1.DeleteTenantRequest]) (*connect.Response[adminv1.DeleteTenantResponse], error) {
	id, err := tenantID(req.Msg.GetId())
	if err == nil {
		err = s.h.cfg.Tenants.Delete(ctx, id)
	}
	if err != nil {
		return nil, s.h.toConnect(ctx, err)
	}
	return connect.NewResponse(&adminv1.DeleteTenantResponse{}), nil
}

// GetTenantUsage serves TenantService.GetTenantUsage.
func (s *server) GetTenantUsage(ctx context.Context, req *connect.Request[adminv1.GetTenantUsageRequest]) (*connect.Response[adminv1.GetTenantUsageResponse], error) {
	id, err := tenantID(req.Msg.GetId())
	if err != nil {
		return nil, s.h.toConnect(ctx, err)
	}
	u, err := s.h.cfg.Tenants.Usage(ctx, id)
	if err != nil {
		return nil, s.h.toConnect(ctx, err)
	}
	return connect.NewResponse(&adminv1.GetTenantUsageResponse{Usage: &adminv1.Usage{Bytes: u.Stored.Bytes,
		Files: u.Stored.Files, ServedBytes: u.ServedBytes, Requests: u.Requests}}), nil
}

// tenantAnswer checks id, calls fn with it and converts the tenant it returns;
// errors come back as Connect errors.
func (s *server) tenantAnswer(ctx context.Context, id string, fn func(id string) (*tenant.View, error)) (*adminv1.Tenant, error) {
	id, err := tenantID(id)
	if err != nil {
		return nil, s.h.toConnect(ctx, err)
	}
	t, err := fn(id)
	if err != nil {
		return nil, s.h.toConnect(ctx, err)
	}
	return tenantPB(t), nil
}
