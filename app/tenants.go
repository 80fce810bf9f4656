package app

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/api"
	"github.com/coffer/coffer/api/hasura"
	"github.com/coffer/coffer/auth"
	"github.com/coffer/coffer/blob"
	"github.com/coffer/coffer/imaging"
	"github.com/coffer/coffer/meta"
	"github.com/coffer/coffer/rpcapi"
	"github.com/coffer/coffer/service"
	"github.com/coffer/coffer/tenant"
)

// TenantsConfig is the settings of multi-tenancy (--tenants and the flags beside it).
type TenantsConfig struct {
	// On routes every request to a tenant by its host (tenants are managed through
	// the management API's TenantService); off, coffer is the single implicit
	// tenant it always was.
	On bool
	// PlatformSecret is the platform admin's credential (TenantService), distinct
	// from every tenant's admin secret.
	PlatformSecret string
	// Key seals the secrets in tenants' settings (AES-256-GCM) and derives each
	// tenant's default presign key: 32 bytes, base64. Every node needs the same.
	Key string
	// DefaultHosts are the hosts of the default tenant: the deployment's own data
	// as it was before tenants (its old host names, so existing clients keep
	// working).
	DefaultHosts []string
	// TrustedProxies are the CIDR prefixes of peers whose X-Forwarded-Host is
	// believed.
	TrustedProxies []string
	// Wildcards are one-label patterns ("*.files.example.com") whose label is the
	// tenant id: acme.files.example.com is tenant acme, with no host of its own.
	Wildcards []string
	// MetricsLabels bounds the tenants labelled in the per-tenant metrics; the
	// others count as "other".
	MetricsLabels int
	// MaxGraphs bounds the tenants whose object graphs are held at once (each
	// ~100-250 KB); past it the least recently used one is dropped and built again
	// on its next request (a few milliseconds).
	MaxGraphs int
	// PathPrefix also selects tenants by a /t/{tenant}/ path prefix, for deployments
	// without DNS names per tenant.
	PathPrefix bool
}

// tenantGraph is one tenant's object graph: its service over its views of the
// shared stores and caches, its credentials, and its faces.
type tenantGraph struct {
	tenant *coffer.Tenant
	svc    *service.Service
	authn  *auth.Authenticator
	router *api.Router
	limit  *tenant.RateLimiter // nil: no request limits
	bw     *tenant.Bandwidth   // nil: no bandwidth limit
	used   atomic.Int64        // Unix second of its last request, for dropping the least recently used
}

// touch records a request now, writing at most once a second.
func (g *tenantGraph) touch(now int64) {
	if g.used.Load() != now {
		g.used.Store(now)
	}
}

// close stops what the graph owns (the authenticator's JWKS refresher).
func (g *tenantGraph) close() { g.authn.Close() }

// tenantPresignKey derives tenant id's presign key from the server's tenant key: the
// same on every node, different for every tenant, so a URL signed for one tenant
// never verifies on another's.
func tenantPresignKey(serverKey []byte, id string) []byte {
	m := hmac.New(sha256.New, serverKey)
	m.Write([]byte("coffer tenant presign key v1\x00" + id))
	return m.Sum(nil)
}

// tenantBlobs returns tenant's blob store: its own S3 bucket, or its view of the
// shared store.
func (s *Main) tenantBlobs(ctx context.Context, t *coffer.Tenant, st tenant.Storage) (*blob.Store, error) {
	if st.Kind != tenant.StorageS3 {
		return s.st.blobs.ForTenant(t.ID), nil
	}
	return openTenantS3(ctx, st)
}

// buildTenantService builds tenant t's service over its views of the stores and
// caches, with the server's image engine, webhooks outbox and scanner.
func (s *Main) buildTenantService(ctx context.Context, t *coffer.Tenant, cfg tenantSettings, log *slog.Logger) (*service.Service, error) {
	tenanted, ok := s.st.base.(meta.Tenanted)
	if !ok {
		return nil, fmt.Errorf("metadata store does not keep tenants apart (meta.Tenanted)")
	}
	scoped := tenanted.ForTenant(t.ID)
	cmeta := s.st.cache.ForIncarnation(t.ID, incarnation(t), scoped)
	blobs, err := s.tenantBlobs(ctx, t, cfg.Storage)
	if err != nil {
		return nil, err
	}
	caches := service.Caches{Content: s.st.content.ForTenant(t.ID, blobs), Variants: s.st.variants.ForTenant(t.ID, blobs)}
	svc, err := service.New(s.serviceConfig(), cmeta, blobs, caches, log)
	if err != nil {
		return nil, err
	}
	svc.UseImages(tenantImages{Engine: s.images, tenant: t.ID, workers: cfg.Limits.ImageConcurrency})
	cmeta.OnRulesChanged(func() { _ = svc.ReloadRules(context.Background()) })
	outbox, _ := scoped.(meta.Outbox)
	svc.SetWebhooks(service.Webhooks{Outbox: outbox, CheckURL: s.checkWebhookURL})
	rejections, _ := scoped.(meta.Rejections)
	svc.SetScanning(service.Scanning{Rejections: rejections, Scanner: s.scanner, FailOpen: s.cfg.ClamAV.FailOpen})
	if err := svc.LoadRules(ctx, nil); err != nil {
		return nil, fmt.Errorf("tenant %s: rules: %w", t.ID, err)
	}
	return svc, nil
}

// buildTenant builds tenant t's graph.
func (s *Main) buildTenant(ctx context.Context, t *coffer.Tenant) (*tenantGraph, error) {
	cfg, err := s.tenancy.settings(t)
	if err != nil {
		return nil, err
	}
	log := s.log.With("tenant", t.ID)
	svc, err := s.buildTenantService(ctx, t, cfg, log)
	if err != nil {
		return nil, err
	}
	acfg := auth.DefaultConfig()
	acfg.AdminSecretHashes, acfg.JWT, acfg.Logger = cfg.AdminSecretHashes, cfg.JWT, log
	acfg.JWTAdminRole, acfg.JWKSTransport = s.cfg.Compat.JWTAdminRole, s.guardTransport
	if cfg.UnauthorizedRole != "" {
		acfg.UnauthorizedRole = cfg.UnauthorizedRole
	}
	authn, err := auth.New(acfg)
	if err != nil {
		return nil, fmt.Errorf("tenant %s: %w", t.ID, err)
	}
	router, err := s.tenantFaces(t, cfg, svc, authn, log)
	if err != nil {
		authn.Close()
		return nil, err
	}
	limit := tenant.NewRateLimiter(cfg.Limits, tenant.DefaultUserTableConfig())
	bw := tenant.NewBandwidth(cfg.Limits.BytesPerSecond, nil)
	return &tenantGraph{tenant: t, svc: svc, authn: authn, router: router, limit: limit, bw: bw}, nil
}

// tenantFaces builds tenant t's faces, as buildHTTP builds the default tenant's,
// with the tenant's presign key and public URL, and a Node that keeps the server's
// own state for the platform operator.
func (s *Main) tenantFaces(t *coffer.Tenant, cfg tenantSettings, svc *service.Service, authn *auth.Authenticator, log *slog.Logger) (*api.Router, error) {
	key := cfg.PresignKey
	if len(key) == 0 {
		key = tenantPresignKey(s.tenancy.key, t.ID)
	}
	signer, err := auth.NewSigner(keyID(key), map[string][]byte{keyID(key): key})
	if err != nil {
		return nil, err
	}
	hcfg := s.hcfg
	hcfg.PublicURL = tenantPublicURL(s.cfg.PublicURL, t, s.cfg.Tenants.Wildcards)
	hcfg.MetricsElsewhere = true // the server's metrics span every tenant: the platform operator's, on the default tenant's hosts
	if cfg.Limits.BytesPerSecond > 0 {
		// The tenant's downloads share its bandwidth, so one of them may get any
		// part of it: the write deadline gives the size no less than 1 KiB/s.
		hcfg.MinWriteRate = min(hcfg.MinWriteRate, 1<<10)
	}
	h, err := hasura.New(hcfg, svc, authn, signer, log)
	if err != nil {
		return nil, err
	}
	rcfg := s.rcfg
	rcfg.Tenants, rcfg.PlatformSecret, rcfg.TenantHost = nil, "", true // TenantService is the platform's, on the default tenant's hosts only
	rcfg.Tenant = t.ID
	if s.sites != nil {
		rcfg.Sites = s.sites.Admin(t.ID)
	}
	rpc := &lazyFace{prefixes: s.rpcPrefixes, refuse: rpcapi.Refusal, build: func() (http.Handler, error) {
		return rpcapi.New(rcfg, svc, tenantNode{}, h.PresignedURL, authn, log)
	}}
	return api.New(h, s.withConsole(rpc)...)
}

// lazyFace is a face built on its first request: a tenant's management API, whose
// handlers (about half of a tenant's graph's memory) most tenants never need.
type lazyFace struct {
	prefixes []string
	refuse   func(http.ResponseWriter, *http.Request, error) // the face's refusals, written without building it
	build    func() (http.Handler, error)
	once     sync.Once
	h        http.Handler
	err      error
}

var _ api.Refuser = (*lazyFace)(nil)

// Prefixes implements api.Face.
func (f *lazyFace) Prefixes() []string { return f.prefixes }

// ServeHTTP implements http.Handler.
func (f *lazyFace) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.once.Do(func() { f.h, f.err = f.build() })
	if f.err != nil {
		f.refuse(w, r, coffer.Errorf(coffer.EUNAVAILABLE, "this tenant's management API cannot be served right now"))
		return
	}
	f.h.ServeHTTP(w, r)
}

// Refuse implements api.Refuser.
func (f *lazyFace) Refuse(w http.ResponseWriter, r *http.Request, err error) { f.refuse(w, r, err) }

// tenantImages is the server's image engine as one tenant's service uses it: its
// transformations share the worker pool as one group (imaging.WithGroup), so a
// tenant flooding transformations leaves the others their share.
type tenantImages struct {
	imaging.Engine
	tenant  string
	workers int // the tenant's cap (settings' limits.imageConcurrency); 0: the pool's default
}

// Transform implements imaging.Engine.
func (e tenantImages) Transform(ctx context.Context, src io.Reader, o imaging.Options) (*imaging.Result, error) {
	return e.Engine.Transform(imaging.WithGroup(ctx, "tenant:"+e.tenant, e.workers, 0), src, o)
}

// tenantNode is a tenant's rpcapi.Node: the server's own state (caches shared by
// every tenant, the image workers) is the platform operator's, not a tenant's.
type tenantNode struct{}

var _ rpcapi.Node = tenantNode{}

func (tenantNode) CacheStats(*coffer.Principal) ([]rpcapi.CacheStats, error) {
	return nil, errServerState()
}

func (tenantNode) ImageWorkers(*coffer.Principal) (rpcapi.ImageWorkers, error) {
	return rpcapi.ImageWorkers{}, errServerState()
}

func errServerState() error {
	return coffer.Errorf(coffer.EFORBIDDEN, "this server's state is shown to the platform operator only, on the default tenant's hosts")
}
