package app

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/auth"
	"github.com/coffer/coffer/imaging"
	"github.com/coffer/coffer/meta"
	"github.com/coffer/coffer/rpcapi"
	"github.com/coffer/coffer/service"
	"github.com/coffer/coffer/tenancy"
)

// TenantsConfig is the settings of multi-tenancy (--tenants and the flags beside it).
type TenantsConfig = tenancy.Config

// buildTenancy builds the tenancy runtime (with --tenants) over the stores, with
// buildTenant as the builder of tenants' graphs.
func (s *Main) buildTenancy(ctx context.Context) (err error) {
	d := tenancy.Deps{Store: s.st.base, Blobs: s.st.blobs, Cache: s.st.cache, Build: s.buildTenant,
		Forget: s.forgetTenant, Log: s.log, StaleUploadAfter: s.cfg.StaleUploadAfter}
	if s.bus != nil {
		d.Bus = s.bus
	}
	if s.sites != nil {
		d.SiteHost = s.sites.SiteHost
	}
	s.tenancy, err = tenancy.New(ctx, s.cfg.Tenants, d)
	return err
}

// forgetTenant drops what this node holds of tenant id, deleted, beside the
// metadata cache (which dropped its own entries before calling it): content and
// variants, its sites' edge entries and bucket names. What the node served for the
// id stays counted: its metrics are counters, which never go down, and the platform
// operator's alone.
func (s *Main) forgetTenant(id string) {
	if st := s.st; st.content != nil {
		st.content.DropTenant(id)
	}
	if st := s.st; st.variants != nil {
		st.variants.DropTenant(id)
	}
	if st := s.sites; st != nil {
		st.ForgetTenant(id)
	}
}

// buildTenant builds tenant t's graph (tenancy.Deps.Build), as the default
// tenant's is built but for what graphSpec says: its presign key and public URL,
// its management API built on its first call, without TenantService and with a
// Node that keeps the server's own state for the platform operator.
func (s *Main) buildTenant(ctx context.Context, t *coffer.Tenant, cfg tenancy.Settings) (*tenancy.Graph, error) {
	log := s.log.With("tenant", t.ID)
	svc, err := s.buildTenantService(ctx, t, cfg, log)
	if err != nil {
		return nil, err
	}
	spec := graphSpec{tenant: t.ID, svc: svc, auth: auth.DefaultConfig(), log: log, lazyRPC: true, node: tenantNode{},
		publicURL: s.tenancy.PublicURL(s.cfg.PublicURL, t),
		// The server's metrics span every tenant: the platform operator's, on the
		// default tenant's hosts.
		metricsElsewhere: true}
	a := &spec.auth
	a.AdminSecretHashes, a.JWT, a.Logger = cfg.AdminSecretHashes, cfg.JWT, log
	a.JWTAdminRole, a.JWKSTransport = s.cfg.Compat.JWTAdminRole, s.guardTransport
	if cfg.UnauthorizedRole != "" {
		a.UnauthorizedRole = cfg.UnauthorizedRole
	}
	if spec.signer, err = auth.NewSigner(auth.KeyID(cfg.PresignKey), map[string][]byte{auth.KeyID(cfg.PresignKey): cfg.PresignKey}); err != nil {
		return nil, err
	}
	if cfg.Limits.BytesPerSecond > 0 {
		// The tenant's downloads share its bandwidth, so one of them may get any
		// part of it: the write deadline gives the size no less than 1 KiB/s.
		spec.minWriteRate = 1 << 10
	}
	g, err := s.buildGraph(spec)
	if err != nil {
		return nil, fmt.Errorf("tenant %s: %w", t.ID, err)
	}
	return g, nil
}

// buildTenantService builds tenant t's service over its views of the stores and
// caches, with the server's image engine as one group of its workers.
func (s *Main) buildTenantService(ctx context.Context, t *coffer.Tenant, cfg tenancy.Settings, log *slog.Logger) (*service.Service, error) {
	tenanted, ok := s.st.base.(meta.Tenanted)
	if !ok {
		return nil, fmt.Errorf("metadata store does not keep tenants apart (meta.Tenanted)")
	}
	scoped := tenanted.ForTenant(t.ID)
	blobs, err := s.tenancy.Blobs(ctx, t, cfg.Storage)
	if err != nil {
		return nil, err
	}
	sp := serviceSpec{meta: s.st.cache.ForIncarnation(t.ID, tenancy.Incarnation(t), scoped), blobs: blobs,
		caches: service.Caches{Content: s.st.content.ForTenant(t.ID, blobs), Variants: s.st.variants.ForTenant(t.ID, blobs)},
		images: imaging.Grouped{Engine: s.images, Group: "tenant:" + t.ID, Workers: cfg.Limits.ImageConcurrency}, log: log}
	sp.outbox, _ = scoped.(meta.Outbox)
	sp.rejections, _ = scoped.(meta.Rejections)
	svc, err := s.newService(ctx, sp)
	if err != nil {
		return nil, fmt.Errorf("tenant %s: %w", t.ID, err)
	}
	return svc, nil
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
