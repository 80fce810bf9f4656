package rpcapi

import (
	"context"
	"encoding/json"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/service"
	"github.com/coffer/coffer/site"
	"github.com/coffer/coffer/tenant"
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
	Presign(ctx context.Context, p *coffer.Principal, id string, want time.Duration) (*coffer.File, time.Duration, error)
}

// RuleService reads, checks and replaces the permission rules.
type RuleService interface {
	Rules(p *coffer.Principal) ([]byte, error)
	ValidateRules(p *coffer.Principal, doc []byte) ([]byte, error)
	SetRules(ctx context.Context, p *coffer.Principal, doc []byte) error
	CheckAccess(ctx context.Context, p *coffer.Principal, q service.AccessQuery) (service.AccessAnswer, error)
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

// TenantAdmin manages the tenants of a multi-tenant server (TenantService):
// service.TenantAdmin implements it over the tenants registry (meta.Tenants) and
// package tenant, which validate ids, hosts and settings and seal the secrets. The face admits only calls
// with the platform secret (Config.PlatformSecret), so implementations check no
// credentials; it bounds the sizes of what it passes (tenants.go) and checks nothing
// else.
//
// Tenants cross it as package tenant's types (tenantconv.go converts the messages):
// tenant.Input and tenant.Change hold settings with the write-only secrets in clear;
// answers are tenant.View, whose settings are redacted (no secret, hash or sealed
// value, only whether each is set).
type TenantAdmin interface {
	// Create stores t (State: active) and returns it. ECONFLICT if the id or one of
	// its hosts is taken; EINVALID for a bad id, host or setting (with the field
	// named from the request's root: "id", "hosts[0]", "settings.jwt").
	Create(ctx context.Context, t tenant.Input) (*tenant.View, error)
	// Get returns ENOTFOUND if there is no such tenant.
	Get(ctx context.Context, id string) (*tenant.View, error)
	// List returns every tenant ordered by id.
	List(ctx context.Context) ([]*tenant.View, error)
	// Update applies c and returns the tenant. ENOTFOUND if missing, ECONFLICT if a
	// new host is another tenant's, EINVALID as Create.
	Update(ctx context.Context, id string, c tenant.Change) (*tenant.View, error)
	// SetState suspends (coffer.TenantSuspended) or resumes (coffer.TenantActive) a
	// tenant and returns it. ENOTFOUND if missing; EPRECONDITION for a tenant
	// being deleted.
	SetState(ctx context.Context, id string, state coffer.TenantState) (*tenant.View, error)
	// Delete marks the tenant deleting and has its data removed in the background
	// (resumed after a restart), then the tenant. ENOTFOUND if missing.
	Delete(ctx context.Context, id string) error
	// Usage returns what the tenant stores and what this node served it. ENOTFOUND
	// if missing.
	Usage(ctx context.Context, id string) (TenantUsage, error)
}

// TenantUsage is a tenant's usage: what it stores and what this node served it.
type TenantUsage = service.TenantUsage

// SiteAdmin manages the sites of the tenant a face serves (SiteService):
// service.SiteAdmin implements it over meta.Sites and package site, which validates and prepares
// sites (secrets sealed, write-only secrets left empty in an update keeping their
// stored values). The face admits only that tenant's admin, so implementations check
// no credentials.
//
// Sites cross it as *site.Document (siteconv.go converts the messages). Those passed in
// hold secrets in clear and never the output-only fields (CreatedAt, UpdatedAt,
// SecretAccessKeySet, SecretSet); the implementation may change them (it normalizes
// and seals them). Those returned are redacted (site.Document.Redacted) with the store's
// times; the face still drops any secret one holds, setting the flags that say so.
type SiteAdmin interface {
	// CreateSite stores s and returns it as stored. ECONFLICT if the id or a host
	// is taken (naming it); EINVALID for a bad site (the field named:
	// "hosts[0]", "routes[2].target.http.url").
	CreateSite(ctx context.Context, s *site.Document) (*site.Document, error)
	// GetSite returns ENOTFOUND if the tenant has no such site.
	GetSite(ctx context.Context, id string) (*site.Document, error)
	// ListSites returns the tenant's sites ordered by id.
	ListSites(ctx context.Context) ([]*site.Document, error)
	// UpdateSite replaces site id with s (whose id is id) and returns it as stored.
	// ENOTFOUND if missing; ECONFLICT and EINVALID as CreateSite.
	UpdateSite(ctx context.Context, id string, s *site.Document) (*site.Document, error)
	// DeleteSite removes the site; ENOTFOUND if missing.
	DeleteSite(ctx context.Context, id string) error
	// PurgeSite drops what p names from the site's cached content on this node and
	// sends it to the others; removed counts this node's entries, broadcast says
	// whether it was sent. ENOTFOUND if the site is missing.
	PurgeSite(ctx context.Context, id string, p site.Purge) (removed int, broadcast bool, err error)
	// SiteStats returns what this node served for the site since it started.
	// ENOTFOUND if the site is missing.
	SiteStats(ctx context.Context, id string) (SiteStats, error)
}

// SiteStats are a site's counters on one node.
type SiteStats = service.SiteStats
