package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/auth"
	"github.com/coffer/coffer/blob"
	pgbus "github.com/coffer/coffer/bus/postgres"
	"github.com/coffer/coffer/cache"
	"github.com/coffer/coffer/console"
	"github.com/coffer/coffer/imaging"
	"github.com/coffer/coffer/imaging/remote"
	"github.com/coffer/coffer/internal/httpserve"
	"github.com/coffer/coffer/meta"
	"github.com/coffer/coffer/service"
	"github.com/coffer/coffer/sites"
	"github.com/coffer/coffer/tenancy"
	"github.com/coffer/coffer/virusscan"
	"github.com/coffer/coffer/webhook"
)

// Main is a coffer server: its stores, service, background work and listeners.
type Main struct {
	cfg *Config
	// console is the web console's handler and consoleFrame it in its Frame; nil
	// with --console=false.
	console      *console.Handler
	consoleFrame *consoleFrame
	parts        Parts
	log          *slog.Logger
	st           *stores
	svc          *service.Service
	http         *http.Server
	ln           net.Listener
	// fast answers plain HTTP/1.1 file GETs on ln and passes other connections to
	// http; nil without --fast-path.
	fast   *httpserve.FastServer
	sweep  context.CancelFunc // stops the sweeper, the rules refresher and the bus
	bg     sync.WaitGroup     // those three, which Close waits for before the stores close
	authn  *auth.Authenticator
	bus    *pgbus.Bus // the cluster bus; nil on SQLite: one node, nobody to tell or hear
	images imaging.Engine
	// webhooks delivers this node's share of the outbox; webhooksDone closes when it
	// has stopped.
	webhooks     *webhook.Dispatcher
	webhooksDone <-chan struct{}
	// metricsHTTP serves /metrics on --metrics-listen (metricsLn); nil without it.
	metricsHTTP *http.Server
	metricsLn   net.Listener
	// debugHTTP serves net/http/pprof on --debug-listen (debugLn); nil without it.
	debugHTTP *http.Server
	debugLn   net.Listener
	// The parts every tenant's graph is built with beside the default tenant's:
	// the webhook URL check, the virus scanner (nil: off), the faces' settings.
	checkWebhookURL func(ctx context.Context, raw string) error
	// guardTransport dials through the webhook SSRF guard: tenants' JWKS fetches
	// use it, their jwk_url being a tenant's setting.
	guardTransport http.RoundTripper
	scanner        virusscan.Scanner
	faceConfig
	// tenancy routes requests to tenants (nil without --tenants).
	tenancy *tenancy.Runtime
	// sites serves the sites (nil with --sites=false).
	sites *sites.Runtime
}

// New validates cfg, opens the stores (migrating the metadata database) and builds
// the server from them, cfg and parts; it does not listen yet. The caller must Close
// it.
func New(ctx context.Context, cfg Config, parts Parts, log *slog.Logger) (*Main, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	st, err := openStores(ctx, &cfg)
	if err != nil {
		return nil, err
	}
	s := &Main{cfg: &cfg, parts: parts, log: log, st: st}
	if err := s.build(ctx); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// build wires the service and everything around it over the opened stores.
func (s *Main) build(ctx context.Context) error {
	c := s.cfg
	if err := s.st.cacheBlobs(c, s.log); err != nil {
		return err
	}
	if err := s.buildImages(); err != nil {
		return err
	}
	if err := s.buildWebhooks(); err != nil {
		return err
	}
	if err := s.buildScanning(ctx); err != nil {
		return err
	}
	if !c.UsesSQLite() {
		var err error
		if s.bus, err = pgbus.New(c.DatabaseURL, s.log); err != nil {
			return err
		}
	}
	var rules []byte
	if c.RulesFile != "" {
		b, err := os.ReadFile(c.RulesFile)
		if err != nil {
			return fmt.Errorf("--rules: %w", err)
		}
		rules = b
	}
	// The default tenant's view of the blobs, with or without --tenants: its orphan
	// sweep must never see a tenant's blobs (from this run or an earlier one).
	svc, err := s.newService(ctx, serviceSpec{meta: s.st.cache, blobs: s.st.blobs.ForTenant(coffer.DefaultTenantID),
		caches: service.Caches{Content: s.st.content, Variants: s.st.variants}, images: s.images,
		outbox: s.st.outbox, rejections: s.st.rejections, rules: rules, log: s.log})
	if err != nil {
		return err
	}
	s.svc = svc
	if err := s.startupSweep(ctx); err != nil {
		return err
	}
	return s.buildHTTP()
}

// serviceSpec is what a tenant's service is built from: its views of the stores
// and caches (the default tenant's are the stores' own).
type serviceSpec struct {
	meta       *cache.Meta
	blobs      *blob.Store
	caches     service.Caches
	images     imaging.Engine
	outbox     meta.Outbox
	rejections meta.Rejections
	rules      []byte // a rules document replacing the stored one; nil: the stored one
	log        *slog.Logger
}

// newService builds a tenant's service, the default one included, with the
// server's webhook URL check and virus scanner.
func (s *Main) newService(ctx context.Context, sp serviceSpec) (*service.Service, error) {
	c := s.cfg
	scfg := service.DefaultConfig()
	scfg.StaleUploadAfter, scfg.SingleNode = c.StaleUploadAfter, c.UsesSQLite()
	scfg.HideForbidden, scfg.ETag, scfg.JWTAdminRole = c.Compat.HideForbidden, c.Compat.ETag, c.Compat.JWTAdminRole
	svc, err := service.New(scfg, sp.meta, sp.blobs, sp.caches, sp.log)
	if err != nil {
		return nil, err
	}
	svc.UseImages(sp.images)
	sp.meta.OnRulesChanged(func() { _ = svc.ReloadRules(context.Background()) }) // a failure is logged and retried
	svc.SetWebhooks(service.Webhooks{Outbox: sp.outbox, CheckURL: s.checkWebhookURL})
	svc.SetScanning(service.Scanning{Rejections: sp.rejections, Scanner: s.scanner, FailOpen: c.ClamAV.FailOpen})
	if err := svc.LoadRules(ctx, sp.rules); err != nil {
		return nil, fmt.Errorf("rules: %w", err)
	}
	return svc, nil
}

// buildImages builds the image engine of parts, else the worker's.
func (s *Main) buildImages() error {
	s.images = s.parts.Images
	if s.images == nil {
		e, err := remote.Open(s.cfg.imageSetup(s.log))
		if err != nil {
			return err
		}
		s.images = e
	}
	return nil
}

// startupSweep removes what an earlier run left unfinished.
func (s *Main) startupSweep(ctx context.Context) error {
	rep, err := s.svc.StartupSweep(ctx)
	if err != nil {
		return fmt.Errorf("startup sweep: %w", err)
	}
	if rep.AbandonedUploads+rep.TempFiles+len(rep.OrphanBlobs) > 0 {
		s.log.Info("startup sweep", "abandoned_uploads", rep.AbandonedUploads, "temp_files", rep.TempFiles, "orphan_blobs", len(rep.OrphanBlobs))
	}
	return nil
}

// Close stops the background work, waits for webhook attempts in flight, stops the
// image worker (unless Parts gave the engine) and closes the stores. It does not stop serving: Run does that.
func (s *Main) Close() error {
	if s.sweep != nil {
		s.sweep()
		s.bg.Wait()
	}
	if s.webhooksDone != nil {
		<-s.webhooksDone // attempts in flight record their outcome before the store closes
	}
	if s.authn != nil {
		s.authn.Close()
	}
	if s.images != nil && s.parts.Images == nil {
		s.images.Close()
	}
	var errs []error
	if s.sites != nil {
		ctx, cancel := context.WithTimeout(context.Background(), s.cfg.ShutdownTimeout)
		errs = append(errs, s.sites.Close(ctx))
		cancel()
	}
	if s.bus != nil {
		s.bus.Close()
	}
	return errors.Join(append(errs, s.st.Close())...)
}
