package rpcapi

import (
	"context"

	"connectrpc.com/connect"

	"github.com/coffer/coffer"
	adminv1 "github.com/coffer/coffer/proto/gen/coffer/admin/v1"
	"github.com/coffer/coffer/service"
)

// ListOrphans serves OpsService.ListOrphans.
func (s *server) ListOrphans(ctx context.Context, _ *connect.Request[adminv1.ListOrphansRequest]) (*connect.Response[adminv1.ListOrphansResponse], error) {
	keys, err := s.h.svc.ListOrphans(ctx, principal(ctx))
	if err != nil {
		return nil, s.h.toConnect(ctx, err)
	}
	return connect.NewResponse(&adminv1.ListOrphansResponse{Keys: keys}), nil
}

// DeleteOrphans serves OpsService.DeleteOrphans.
func (s *server) DeleteOrphans(ctx context.Context, _ *connect.Request[adminv1.DeleteOrphansRequest]) (*connect.Response[adminv1.DeleteOrphansResponse], error) {
	keys, err := s.h.svc.DeleteOrphans(ctx, principal(ctx))
	if err != nil {
		return nil, s.h.toConnect(ctx, err)
	}
	return connect.NewResponse(&adminv1.DeleteOrphansResponse{Keys: keys}), nil
}

// ListBrokenMetadata serves OpsService.ListBrokenMetadata.
func (s *server) ListBrokenMetadata(ctx context.Context, _ *connect.Request[adminv1.ListBrokenMetadataRequest]) (*connect.Response[adminv1.ListBrokenMetadataResponse], error) {
	fs, err := s.h.svc.ListBrokenMetadata(ctx, principal(ctx))
	if err != nil {
		return nil, s.h.toConnect(ctx, err)
	}
	return connect.NewResponse(&adminv1.ListBrokenMetadataResponse{Files: filesPB(fs)}), nil
}

// DeleteBrokenMetadata serves OpsService.DeleteBrokenMetadata.
func (s *server) DeleteBrokenMetadata(ctx context.Context, _ *connect.Request[adminv1.DeleteBrokenMetadataRequest]) (*connect.Response[adminv1.DeleteBrokenMetadataResponse], error) {
	fs, err := s.h.svc.DeleteBrokenMetadata(ctx, principal(ctx))
	if err != nil {
		return nil, s.h.toConnect(ctx, err)
	}
	return connect.NewResponse(&adminv1.DeleteBrokenMetadataResponse{Files: filesPB(fs)}), nil
}

// ListNotUploaded serves OpsService.ListNotUploaded.
func (s *server) ListNotUploaded(ctx context.Context, _ *connect.Request[adminv1.ListNotUploadedRequest]) (*connect.Response[adminv1.ListNotUploadedResponse], error) {
	fs, err := s.h.svc.ListNotUploaded(ctx, principal(ctx))
	if err != nil {
		return nil, s.h.toConnect(ctx, err)
	}
	return connect.NewResponse(&adminv1.ListNotUploadedResponse{Files: filesPB(fs)}), nil
}

// Sweep serves OpsService.Sweep; older_than unset is service.DefaultSweepAge, as on /v1.
func (s *server) Sweep(ctx context.Context, req *connect.Request[adminv1.SweepRequest]) (*connect.Response[adminv1.SweepResponse], error) {
	age := service.DefaultSweepAge
	if d := req.Msg.GetOlderThan(); d != nil {
		if err := d.CheckValid(); err != nil {
			return nil, s.h.toConnect(ctx, coffer.InvalidField("olderThan", "olderThan is not a valid duration"))
		}
		age = d.AsDuration()
	}
	rep, err := s.h.svc.SweepOlderThan(ctx, principal(ctx), age)
	if err != nil {
		return nil, s.h.toConnect(ctx, err)
	}
	return connect.NewResponse(&adminv1.SweepResponse{AbandonedUploads: int32(rep.AbandonedUploads),
		TempFiles: int32(rep.TempFiles), OrphanBlobs: rep.OrphanBlobs}), nil
}

// ListVirusRejections serves OpsService.ListVirusRejections.
func (s *server) ListVirusRejections(ctx context.Context, req *connect.Request[adminv1.ListVirusRejectionsRequest]) (*connect.Response[adminv1.ListVirusRejectionsResponse], error) {
	rs, err := s.h.svc.ListRejections(ctx, principal(ctx), limitArg(req.Msg.GetLimit()))
	if err != nil {
		return nil, s.h.toConnect(ctx, err)
	}
	out := &adminv1.ListVirusRejectionsResponse{Rejections: make([]*adminv1.VirusRejection, len(rs))}
	for i, r := range rs {
		out.Rejections[i] = rejectionPB(r)
	}
	return connect.NewResponse(out), nil
}
