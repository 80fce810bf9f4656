package rpcapi

import (
	"context"

	"connectrpc.com/connect"

	adminv1 "github.com/coffer/coffer/proto/gen/coffer/admin/v1"
)

// ListBuckets serves BucketService.ListBuckets.
func (s *server) ListBuckets(ctx context.Context, _ *connect.Request[adminv1.ListBucketsRequest]) (*connect.Response[adminv1.ListBucketsResponse], error) {
	bs, err := s.h.svc.ListBuckets(ctx, principal(ctx))
	if err != nil {
		return nil, s.h.toConnect(ctx, err)
	}
	out := &adminv1.ListBucketsResponse{Buckets: make([]*adminv1.Bucket, len(bs))}
	for i, b := range bs {
		out.Buckets[i] = bucketPB(b)
	}
	return connect.NewResponse(out), nil
}

// GetBucket serves BucketService.GetBucket.
func (s *server) GetBucket(ctx context.Context, req *connect.Request[adminv1.GetBucketRequest]) (*connect.Response[adminv1.GetBucketResponse], error) {
	b, err := s.h.svc.GetBucket(ctx, principal(ctx), req.Msg.GetId())
	if err != nil {
		return nil, s.h.toConnect(ctx, err)
	}
	return connect.NewResponse(&adminv1.GetBucketResponse{Bucket: bucketPB(b)}), nil
}

// CreateBucket serves BucketService.CreateBucket.
func (s *server) CreateBucket(ctx context.Context, req *connect.Request[adminv1.CreateBucketRequest]) (*connect.Response[adminv1.CreateBucketResponse], error) {
	b, err := s.h.svc.CreateBucket(ctx, principal(ctx), req.Msg.GetId(), bucketUpdate(req.Msg.GetSettings()))
	if err != nil {
		return nil, s.h.toConnect(ctx, err)
	}
	return connect.NewResponse(&adminv1.CreateBucketResponse{Bucket: bucketPB(b)}), nil
}

// UpdateBucket serves BucketService.UpdateBucket.
func (s *server) UpdateBucket(ctx context.Context, req *connect.Request[adminv1.UpdateBucketRequest]) (*connect.Response[adminv1.UpdateBucketResponse], error) {
	b, err := s.h.svc.UpdateBucket(ctx, principal(ctx), req.Msg.GetId(), bucketUpdate(req.Msg.GetSettings()))
	if err != nil {
		return nil, s.h.toConnect(ctx, err)
	}
	return connect.NewResponse(&adminv1.UpdateBucketResponse{Bucket: bucketPB(b)}), nil
}

// DeleteBucket serves BucketService.DeleteBucket.
func (s *server) DeleteBucket(ctx context.Context, req *connect.Request[adminv1.DeleteBucketRequest]) (*connect.Response[adminv1.DeleteBucketResponse], error) {
	if err := s.h.svc.DeleteBucket(ctx, principal(ctx), req.Msg.GetId()); err != nil {
		return nil, s.h.toConnect(ctx, err)
	}
	return connect.NewResponse(&adminv1.DeleteBucketResponse{}), nil
}
