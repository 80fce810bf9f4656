package rpcapi

import (
	"context"

	"connectrpc.com/connect"

	"github.com/coffer/coffer"
	adminv1 "github.com/coffer/coffer/proto/gen/coffer/admin/v1"
	"github.com/coffer/coffer/service"
	"github.com/coffer/coffer/site"
)

// SiteService's methods: each admits the face's tenant's admin (sites), bounds its
// input (siteconv.go), calls Config.Sites once and answers without secrets.

// sites returns Config.Sites if the caller of ctx is an admin: EUNAUTHORIZED without
// credentials, EFORBIDDEN with others; EPRECONDITION when the server serves no sites.
func (s *server) sites(ctx context.Context) (SiteAdmin, error) {
	if err := requireAdmin(principal(ctx)); err != nil {
		return nil, err
	}
	if s.h.cfg.Sites == nil {
		return nil, coffer.Errorf(coffer.EPRECONDITION, "this server does not serve sites")
	}
	return s.h.cfg.Sites, nil
}

// requireAdmin refuses a caller that is not an admin, as the service does (no
// principal: as one without credentials).
func requireAdmin(p *coffer.Principal) error {
	if p == nil {
		p = &coffer.Principal{Anonymous: true}
	}
	return service.RequireAdmin(p)
}

// CreateSite serves SiteService.CreateSite.
func (s *server) CreateSite(ctx context.Context, req *connect.Request[adminv1.CreateSiteRequest]) (*connect.Response[adminv1.CreateSiteResponse], error) {
	pb, err := s.siteAnswer(ctx, func(sa SiteAdmin) (*site.Document, error) {
		in, err := siteArg(req.Msg.GetSite(), "")
		if err != nil {
			return nil, err
		}
		return sa.CreateSite(ctx, in)
	})
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&adminv1.CreateSiteResponse{Site: pb}), nil
}

// GetSite serves SiteService.GetSite.
func (s *server) GetSite(ctx context.Context, req *connect.Request[adminv1.GetSiteRequest]) (*connect.Response[adminv1.GetSiteResponse], error) {
	pb, err := s.siteAnswer(ctx, func(sa SiteAdmin) (*site.Document, error) {
		id, err := siteID("id", req.Msg.GetId())
		if err != nil {
			return nil, err
		}
		return sa.GetSite(ctx, id)
	})
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&adminv1.GetSiteResponse{Site: pb}), nil
}

// ListSites serves SiteService.ListSites.
func (s *server) ListSites(ctx context.Context, _ *connect.Request[adminv1.ListSitesRequest]) (*connect.Response[adminv1.ListSitesResponse], error) {
	sa, err := s.sites(ctx)
	if err != nil {
		return nil, s.h.toConnect(ctx, err)
	}
	list, err := sa.ListSites(ctx)
	if err != nil {
		return nil, s.h.toConnect(ctx, err)
	}
	out := &adminv1.ListSitesResponse{Sites: make([]*adminv1.Site, len(list))}
	for i, st := range list {
		if out.Sites[i], err = sitePB(st); err != nil {
			return nil, s.h.toConnect(ctx, err)
		}
	}
	return connect.NewResponse(out), nil
}

// UpdateSite serves SiteService.UpdateSite: the document's id is the request's.
func (s *server) UpdateSite(ctx context.Context, req *connect.Request[adminv1.UpdateSiteRequest]) (*connect.Response[adminv1.UpdateSiteResponse], error) {
	pb, err := s.siteAnswer(ctx, func(sa SiteAdmin) (*site.Document, error) {
		id, err := siteID("id", req.Msg.GetId())
		if err != nil {
			return nil, err
		}
		in := req.Msg.GetSite()
		if in != nil && in.GetId() != "" && in.GetId() != id {
			return nil, coffer.InvalidField("site.id", "the document's id is not the site's (a site's id cannot change)")
		}
		st, err := siteArg(in, id)
		if err != nil {
			return nil, err
		}
		return sa.UpdateSite(ctx, id, st)
	})
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&adminv1.UpdateSiteResponse{Site: pb}), nil
}

// DeleteSite serves SiteService.DeleteSite.
func (s *server) DeleteSite(ctx context.Context, req *connect.Request[adminv1.DeleteSiteRequest]) (*connect.Response[adminv1.DeleteSiteResponse], error) {
	sa, err := s.sites(ctx)
	if err == nil {
		var id string
		if id, err = siteID("id", req.Msg.GetId()); err == nil {
			err = sa.DeleteSite(ctx, id)
		}
	}
	if err != nil {
		return nil, s.h.toConnect(ctx, err)
	}
	return connect.NewResponse(&adminv1.DeleteSiteResponse{}), nil
}

// PurgeSite serves SiteService.PurgeSite.
func (s *server) PurgeSite(ctx context.Context, req *connect.Request[adminv1.PurgeSiteRequest]) (*connect.Response[adminv1.PurgeSiteResponse], error) {
	out, err := s.purgeSite(ctx, req.Msg)
	if err != nil {
		return nil, s.h.toConnect(ctx, err)
	}
	return connect.NewResponse(out), nil
}

// purgeSite admits, checks and runs a purge.
func (s *server) purgeSite(ctx context.Context, r *adminv1.PurgeSiteRequest) (*adminv1.PurgeSiteResponse, error) {
	sa, err := s.sites(ctx)
	if err != nil {
		return nil, err
	}
	id, err := siteID("siteId", r.GetSiteId())
	if err != nil {
		return nil, err
	}
	p, err := purgeArg(r)
	if err != nil {
		return nil, err
	}
	removed, broadcast, err := sa.PurgeSite(ctx, id, p)
	if err != nil {
		return nil, err
	}
	return &adminv1.PurgeSiteResponse{Removed: int64(removed), Broadcast: broadcast}, nil
}

// GetSiteStats serves SiteService.GetSiteStats.
func (s *server) GetSiteStats(ctx context.Context, req *connect.Request[adminv1.GetSiteStatsRequest]) (*connect.Response[adminv1.GetSiteStatsResponse], error) {
	sa, err := s.sites(ctx)
	var st SiteStats
	if err == nil {
		var id string
		if id, err = siteID("siteId", req.Msg.GetSiteId()); err == nil {
			st, err = sa.SiteStats(ctx, id)
		}
	}
	if err != nil {
		return nil, s.h.toConnect(ctx, err)
	}
	return connect.NewResponse(statsPB(st)), nil
}

// siteAnswer admits the call, runs fn and converts the site it returns; errors
// come back as Connect errors.
func (s *server) siteAnswer(ctx context.Context, fn func(SiteAdmin) (*site.Document, error)) (*adminv1.Site, error) {
	sa, err := s.sites(ctx)
	if err != nil {
		return nil, s.h.toConnect(ctx, err)
	}
	st, err := fn(sa)
	if err != nil {
		return nil, s.h.toConnect(ctx, err)
	}
	pb, err := sitePB(st)
	if err != nil {
		return nil, s.h.toConnect(ctx, err)
	}
	return pb, nil
}
