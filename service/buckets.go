package service

import (
	"context"

	"github.com/coffer/coffer"
)

// ListBuckets returns every bucket (admin).
func (s *Service) ListBuckets(ctx context.Context, p *coffer.Principal) ([]*coffer.Bucket, error) {
	if err := requireAdmin(p); err != nil {
		return nil, err
	}
	return s.meta.ListBuckets(ctx)
}

// GetBucket returns one bucket (admin).
func (s *Service) GetBucket(ctx context.Context, p *coffer.Principal, id string) (*coffer.Bucket, error) {
	if err := requireAdmin(p); err != nil {
		return nil, err
	}
	if err := coffer.ValidateBucketID(id); err != nil {
		return nil, coffer.Errorf(coffer.ENOTFOUND, "bucket not found")
	}
	return s.meta.GetBucket(ctx, id)
}

// CreateBucket creates a bucket from b's id with hasura-storage's defaults, then
// applies u (admin).
func (s *Service) CreateBucket(ctx context.Context, p *coffer.Principal, id string, u coffer.BucketUpdate) (*coffer.Bucket, error) {
	if err := requireAdmin(p); err != nil {
		return nil, err
	}
	b := coffer.NewBucket(id)
	u.Apply(b)
	if err := b.Validate(); err != nil {
		return nil, err
	}
	if err := s.meta.CreateBucket(coffer.WithActor(ctx, p), b); err != nil {
		return nil, err
	}
	return b, nil
}

// UpdateBucket changes a bucket's settings (admin).
func (s *Service) UpdateBucket(ctx context.Context, p *coffer.Principal, id string, u coffer.BucketUpdate) (*coffer.Bucket, error) {
	b, err := s.GetBucket(ctx, p, id)
	if err != nil {
		return nil, err
	}
	u.Apply(b)
	if err := b.Validate(); err != nil {
		return nil, err
	}
	return s.meta.UpdateBucket(ctx, id, u)
}

// DeleteBucket removes an empty bucket (admin); EINUSE while it holds files, and for
// the default bucket.
func (s *Service) DeleteBucket(ctx context.Context, p *coffer.Principal, id string) error {
	if _, err := s.GetBucket(ctx, p, id); err != nil {
		return err
	}
	if id == coffer.DefaultBucketID {
		return coffer.Errorf(coffer.EINUSE, "the default bucket cannot be deleted")
	}
	return s.meta.DeleteBucket(coffer.WithActor(ctx, p), id)
}
