package hasura

import (
	"context"
	"encoding/json"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/imaging"
	"github.com/coffer/coffer/service"
)

// The face consumes the use cases through the small interfaces below, declared here
// by their consumer and listing exactly the methods the face calls; *service.Service
// implements them all (service_test.go asserts it). Errors are coffer.Error kinds,
// mapped to statuses by httpserve.StatusOf; each method's own errors are documented
// on its service implementation.

// Service is every use case the hasura face serves.
type Service interface {
	FileService
	BucketService
	RuleService
	WebhookService
	OpsService
	HealthService
}

// FileService reads, writes and transforms files.
type FileService interface {
	// GetFile returns a file's metadata and bucket. ENOTFOUND if p may not read it.
	GetFile(ctx context.Context, p *coffer.Principal, id string) (*coffer.File, *coffer.Bucket, error)
	// OpenFile is GetFile with an open reader of the contents, which the caller closes.
	OpenFile(ctx context.Context, p *coffer.Principal, id string) (*coffer.File, *coffer.Bucket, service.Reader, error)
	// OpenVariant returns file id transformed by o; accept is the Accept header.
	OpenVariant(ctx context.Context, p *coffer.Principal, id string, o imaging.Options, accept string) (*coffer.File, *coffer.Bucket, *service.Variant, error)
	// UpdateFile changes a file's name and/or metadata (nil: unchanged).
	UpdateFile(ctx context.Context, p *coffer.Principal, id string, name *string, md json.RawMessage) (*coffer.File, error)
	// Presign checks that p may have a presigned URL of file id and returns its
	// lifetime: want, capped at the bucket's download expiration (0: that).
	Presign(ctx context.Context, p *coffer.Principal, id string, want time.Duration) (*coffer.File, time.Duration, error)
	// DeleteFile removes a file.
	DeleteFile(ctx context.Context, p *coffer.Principal, id string) error
	// ListFiles lists a bucket's uploaded files.
	ListFiles(ctx context.Context, p *coffer.Principal, opt coffer.ListOptions) (coffer.Page, error)
	// BeginUpload starts an upload into bucketID.
	BeginUpload(ctx context.Context, p *coffer.Principal, bucketID string) (*service.Upload, error)
	// BeginUploadLater starts an upload whose bucket is named after its bytes.
	BeginUploadLater(ctx context.Context, p *coffer.Principal) (*service.Upload, error)
	// BeginReplace starts replacing file id's contents.
	BeginReplace(ctx context.Context, p *coffer.Principal, id string) (*service.Upload, error)
}

// BucketService administers buckets.
type BucketService interface {
	// ListBuckets returns every bucket.
	ListBuckets(ctx context.Context, p *coffer.Principal) ([]*coffer.Bucket, error)
	// GetBucket returns bucket id.
	GetBucket(ctx context.Context, p *coffer.Principal, id string) (*coffer.Bucket, error)
	// CreateBucket creates bucket id with the settings in u.
	CreateBucket(ctx context.Context, p *coffer.Principal, id string, u coffer.BucketUpdate) (*coffer.Bucket, error)
	// UpdateBucket changes bucket id's settings.
	UpdateBucket(ctx context.Context, p *coffer.Principal, id string, u coffer.BucketUpdate) (*coffer.Bucket, error)
	// DeleteBucket removes bucket id.
	DeleteBucket(ctx context.Context, p *coffer.Principal, id string) error
}

// RuleService reads and replaces the permission rules.
type RuleService interface {
	// Rules returns the rules document in force.
	Rules(p *coffer.Principal) ([]byte, error)
	// SetRules validates, stores and installs a rules document.
	SetRules(ctx context.Context, p *coffer.Principal, doc []byte) error
}

// WebhookService administers webhook subscriptions and their deliveries.
type WebhookService interface {
	// CreateSubscription subscribes a URL to events.
	CreateSubscription(ctx context.Context, p *coffer.Principal, sub coffer.Subscription) (*coffer.Subscription, error)
	// ListSubscriptions returns every subscription.
	ListSubscriptions(ctx context.Context, p *coffer.Principal) ([]*coffer.Subscription, error)
	// GetSubscription returns subscription id.
	GetSubscription(ctx context.Context, p *coffer.Principal, id string) (*coffer.Subscription, error)
	// DeleteSubscription removes subscription id.
	DeleteSubscription(ctx context.Context, p *coffer.Principal, id string) error
	// ListDeliveries returns a subscription's deliveries, optionally in one state.
	ListDeliveries(ctx context.Context, p *coffer.Principal, subID, state string, limit int) ([]*coffer.Delivery, error)
	// Redeliver delivers a delivery again.
	Redeliver(ctx context.Context, p *coffer.Principal, subID, deliveryID string) error
}

// OpsService is the operators' maintenance: orphans, broken metadata, sweeping and
// virus-scan rejections.
type OpsService interface {
	// ListOrphans returns blob keys nothing references.
	ListOrphans(ctx context.Context, p *coffer.Principal) ([]string, error)
	// DeleteOrphans deletes what ListOrphans finds.
	DeleteOrphans(ctx context.Context, p *coffer.Principal) ([]string, error)
	// ListBrokenMetadata returns uploaded files whose blob is missing.
	ListBrokenMetadata(ctx context.Context, p *coffer.Principal) ([]*coffer.File, error)
	// DeleteBrokenMetadata deletes what ListBrokenMetadata finds.
	DeleteBrokenMetadata(ctx context.Context, p *coffer.Principal) ([]*coffer.File, error)
	// ListNotUploaded returns files whose upload never completed.
	ListNotUploaded(ctx context.Context, p *coffer.Principal) ([]*coffer.File, error)
	// SweepOlderThan removes what crashes and failures left behind more than age ago.
	SweepOlderThan(ctx context.Context, p *coffer.Principal, age time.Duration) (service.SweepReport, error)
	// ListRejections returns the latest uploads the virus scanner refused.
	ListRejections(ctx context.Context, p *coffer.Principal, limit int) ([]*coffer.Rejection, error)
}

// HealthService answers health checks.
type HealthService interface {
	// Ping returns an error if the metadata store does not answer.
	Ping(ctx context.Context) error
}
