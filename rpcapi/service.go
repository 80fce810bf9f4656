package rpcapi

import (
	"context"
	"encoding/json"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/service"
)

// The face consumes the use cases through the small interfaces below, declared here
// by their consumer and listing exactly the methods it calls; *service.Service
// implements Service (service_test.go asserts it). Errors are coffer.Error kinds,
// mapped to Connect codes by CodeOf; each method's own errors are documented on its
// service implementation.

// Service is every use case the RPC face serves.
type Service interface {
	BucketService
	FileService
	RuleService
	WebhookService
	OpsService
	// Ping returns an error if the metadata store does not answer (health).
	Ping(ctx context.Context) error
}

// BucketService administers buckets.
type BucketService interface {
	ListBuckets(ctx context.Context, p *coffer.Principal) ([]*coffer.Bucket, error)
	GetBucket(ctx context.Context, p *coffer.Principal, id string) (*coffer.Bucket, error)
	CreateBucket(ctx context.Context, p *coffer.Principal, id string, u coffer.BucketUpdate) (*coffer.Bucket, error)
	UpdateBucket(ctx context.Context, p *coffer.Principal, id string, u coffer.BucketUpdate) (*coffer.Bucket, error)
	DeleteBucket(ctx context.Context, p *coffer.Principal, id string) error
}

// FileService reads and changes files' metadata.
type FileService interface {
	GetFile(ctx context.Context, p *coffer.Principal, id string) (*coffer.File, *coffer.Bucket, error)
	ListFiles(ctx context.Context, p *coffer.Principal, opt coffer.ListOptions) (coffer.Page, error)
	UpdateFile(ctx context.Context, p *coffer.Principal, id string, name *string, md json.RawMessage) (*coffer.File, error)
	DeleteFile(ctx context.Context, p *coffer.Principal, id string) error
	Presign(ctx context.Context, p *coffer.Principal, id string) (*coffer.File, time.Duration, error)
}

// RuleService reads, checks and replaces the permission rules.
type RuleService interface {
	Rules(p *coffer.Principal) ([]byte, error)
	ValidateRules(p *coffer.Principal, doc []byte) ([]byte, error)
	SetRules(ctx context.Context, p *coffer.Principal, doc []byte) error
}

// WebhookService administers webhook subscriptions and their deliveries.
type WebhookService interface {
	CreateSubscription(ctx context.Context, p *coffer.Principal, sub coffer.Subscription) (*coffer.Subscription, error)
	ListSubscriptions(ctx context.Context, p *coffer.Principal) ([]*coffer.Subscription, error)
	GetSubscription(ctx context.Context, p *coffer.Principal, id string) (*coffer.Subscription, error)
	DeleteSubscription(ctx context.Context, p *coffer.Principal, id string) error
	ListDeliveries(ctx context.Context, p *coffer.Principal, subID, state string, limit int) ([]*coffer.Delivery, error)
	Redeliver(ctx context.Context, p *coffer.Principal, subID, deliveryID string) error
}

// OpsService is the operators' maintenance.
type OpsService interface {
	ListOrphans(ctx context.Context, p *coffer.Principal) ([]string, error)
	DeleteOrphans(ctx context.Context, p *coffer.Principal) ([]string, error)
	ListBrokenMetadata(ctx context.Context, p *coffer.Principal) ([]*coffer.File, error)
	DeleteBrokenMetadata(ctx context.Context, p *coffer.Principal) ([]*coffer.File, error)
	ListNotUploaded(ctx context.Context, p *coffer.Principal) ([]*coffer.File, error)
	SweepOlderThan(ctx context.Context, p *coffer.Principal, age time.Duration) (service.SweepReport, error)
	ListRejections(ctx context.Context, p *coffer.Principal, limit int) ([]*coffer.Rejection, error)
}

// Node reports this server's own state, which the service does not hold: app
// implements it over the caches and the image engine it built.
type Node interface {
	// CacheStats returns the counters of the caches that are on (admin).
	CacheStats(p *coffer.Principal) ([]CacheStats, error)
	// ImageWorkers returns the image worker pool's state (admin).
	ImageWorkers(p *coffer.Principal) (ImageWorkers, error)
}

// CacheStats are one cache's counters.
type CacheStats struct {
	Name                    string
	Hits, Misses, Evictions uint64
}

// ImageWorkers is the image worker pool's state.
type ImageWorkers struct {
	Enabled                           bool
	Workers, Busy, Queued, QueueLimit int
	Starts                            int64
	Remote                            []RemoteImageWorker // with --image-workers-remote
}

// RemoteImageWorker is one remote image worker's state, as imaging/remote reports it.
type RemoteImageWorker struct {
	Addr                      string
	Healthy                   bool
	InFlight, Failures        int
	Transforms, FailuresTotal int64
	LastError                 string
}

// Presigner makes the presigned download URL of a file, valid for ttl: the hasura
// face's, whose route serves it.
type Presigner func(id string, ttl time.Duration) string
