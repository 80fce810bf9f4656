package rpcapi

import (
	"context"
	"time"

	"connectrpc.com/connect"

	"github.com/coffer/coffer"
	adminv1 "github.com/coffer/coffer/proto/gen/coffer/admin/v1"
)

// GetFile serves FileService.GetFile.
func (s *server) GetFile(ctx context.Context, req *connect.Request[adminv1.GetFileRequest]) (*connect.Response[adminv1.GetFileResponse], error) {
	f, _, err := s.h.svc.GetFile(ctx, principal(ctx), req.Msg.GetId())
	if err != nil {
		return nil, s.h.toConnect(ctx, err)
	}
	return connect.NewResponse(&adminv1.GetFileResponse{File: filePB(f)}), nil
}

// ListFiles serves FileService.ListFiles; the page token is the store's opaque cursor.
func (s *server) ListFiles(ctx context.Context, req *connect.Request[adminv1.ListFilesRequest]) (*connect.Response[adminv1.ListFilesResponse], error) {
	m := req.Msg
	opt := coffer.ListOptions{BucketID: m.GetBucketId(), Prefix: m.GetPrefix(), Limit: int(m.GetPageSize()),
		Cursor: m.GetPageToken(), Delimiter: m.GetDelimiter()}
	page, err := s.h.svc.ListFiles(ctx, principal(ctx), opt)
	if err != nil {
		return nil, s.h.toConnect(ctx, err)
	}
	return connect.NewResponse(&adminv1.ListFilesResponse{Files: filesPB(page.Files), NextPageToken: page.Next,
		Prefixes: page.Prefixes}), nil
}

// UpdateFile serves FileService.UpdateFile.
func (s *server) UpdateFile(ctx context.Context, req *connect.Request[adminv1.UpdateFileRequest]) (*connect.Response[adminv1.UpdateFileResponse], error) {
	m := req.Msg
	f, err := s.h.svc.UpdateFile(ctx, principal(ctx), m.GetId(), m.Name, metadataArg(m.MetadataJson))
	if err != nil {
		return nil, s.h.toConnect(ctx, err)
	}
	return connect.NewResponse(&adminv1.UpdateFileResponse{File: filePB(f)}), nil
}

// DeleteFile serves FileService.DeleteFile.
func (s *server) DeleteFile(ctx context.Context, req *connect.Request[adminv1.DeleteFileRequest]) (*connect.Response[adminv1.DeleteFileResponse], error) {
	if err := s.h.svc.DeleteFile(ctx, principal(ctx), req.Msg.GetId()); err != nil {
		return nil, s.h.toConnect(ctx, err)
	}
	return connect.NewResponse(&adminv1.DeleteFileResponse{}), nil
}

// PresignFile serves FileService.PresignFile: the service checks, the hasura face's
// Presigner signs (its route serves the URL).
func (s *server) PresignFile(ctx context.Context, req *connect.Request[adminv1.PresignFileRequest]) (*connect.Response[adminv1.PresignFileResponse], error) {
	f, ttl, err := s.h.svc.Presign(ctx, principal(ctx), req.Msg.GetId(), presignTTL(req.Msg.GetExpiresInSeconds()))
	if err != nil {
		return nil, s.h.toConnect(ctx, err)
	}
	return connect.NewResponse(&adminv1.PresignFileResponse{Url: s.h.presign(f.ID, ttl), ExpiresInSeconds: int64(ttl.Seconds())}), nil
}

// presignTTL converts PresignFileRequest.expires_in_seconds, clamped to -1 (which
// the service refuses) and coffer.MaxDownloadExpiration (the bucket's expiration
// caps it anyway) so that it cannot overflow.
func presignTTL(secs int64) time.Duration {
	return time.Duration(max(-1, min(secs, coffer.MaxDownloadExpiration))) * time.Second
}
