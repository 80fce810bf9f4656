package main

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/coffer/coffer/auth"
	"github.com/coffer/coffer/blob"
	"github.com/coffer/coffer/blob/fsblob"
	"github.com/coffer/coffer/blob/s3blob"
	"github.com/coffer/coffer/cache"
	"github.com/coffer/coffer/httpapi"
	"github.com/coffer/coffer/imaging"
	"github.com/coffer/coffer/meta"
	"github.com/coffer/coffer/meta/postgres"
	"github.com/coffer/coffer/meta/sqlite"
	"github.com/coffer/coffer/metrics"
	"github.com/coffer/coffer/service"
	"github.com/coffer/coffer/webhook"
)

// stores are the opened backends. meta is the cached, counted store the service uses;
// db counts the calls that reach the database under the cache.
type stores struct {
	meta  meta.Store
	db    *meta.Counting
	cache *cache.Meta
	blobs *blob.Store
	lock  *os.File
	// outbox is the database's webhook outbox (the uncached store).
	outbox meta.Outbox
	// rejections records uploads refused by the virus scanner (the uncached store).
	rejections meta.Rejections
}

func (s *stores) Close() error {
	var errs []error
	if s.blobs != nil {
		errs = append(errs, s.blobs.Close())
	}
	if s.meta != nil {
		errs = append(errs, s.meta.Close())
	}
	if s.lock != nil {
		errs = append(errs, s.lock.Close())
	}
	return errors.Join(errs...)
}

// openStores opens and migrates the metadata store and opens the blob store, chosen
// by an explicit switch on the configuration.
func openStores(ctx context.Context, c *serveConfig) (*stores, error) {
	st := &stores{}
	if c.usesSQLite() || c.S3Endpoint == "" {
		if err := os.MkdirAll(c.DataDir, 0o750); err != nil {
			return nil, fmt.Errorf("data dir: %w", err)
		}
		lock, err := lockDataDir(c.DataDir)
		if err != nil {
			return nil, err
		}
		st.lock = lock
	}
	if err := st.openMeta(ctx, c); err != nil {
		st.Close()
		return nil, err
	}
	if err := st.cacheMeta(c); err != nil {
		st.Close()
		return nil, err
	}
	if err := st.openBlobs(ctx, c); err != nil {
		st.Close()
		return nil, err
	}
	return st, nil
}

// openMeta opens the metadata database and applies its migrations (all that
// `coffer migrate` needs).
func (st *stores) openMeta(ctx context.Context, c *serveConfig) error {
	var err error
	switch {
	case c.DatabaseURL != "":
		st.meta, err = postgres.Open(ctx, c.DatabaseURL)
	default:
		st.meta, err = sqlite.Open(ctx, filepath.Join(c.DataDir, "coffer.db"))
	}
	if err != nil {
		return fmt.Errorf("metadata store: %w", err)
	}
	st.outbox = st.meta.(meta.Outbox)
	st.rejections = st.meta.(meta.Rejections)
	type migrator interface{ Migrate(context.Context) error }
	if err := st.meta.(migrator).Migrate(ctx); err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	return nil
}

// cacheMeta puts the call counter and the metadata cache over the opened database.
func (st *stores) cacheMeta(c *serveConfig) error {
	var err error
	mcfg := cache.DefaultMetaConfig()
	mcfg.Files, mcfg.TTL = c.MetaCacheFiles, c.MetaCacheTTL
	st.db = meta.NewCounting(st.meta)
	if st.cache, err = cache.NewMeta(st.db, mcfg); err != nil {
		return err
	}
	st.meta = st.cache
	return nil
}

func (st *stores) openBlobs(ctx context.Context, c *serveConfig) error {
	var d blob.Driver
	var err error
	switch {
	case c.S3Endpoint != "":
		cfg := s3blob.DefaultConfig()
		cfg.Endpoint, cfg.Bucket, cfg.Region = c.S3Endpoint, c.S3Bucket, c.S3Region
		cfg.AccessKey, cfg.SecretKey, cfg.PathStyle = c.S3AccessKey, c.S3SecretKey, c.S3PathStyle
		d, err = s3blob.New(ctx, cfg)
	default:
		d, err = fsblob.New(filepath.Join(c.DataDir, "blobs"))
	}
	if err != nil {
		return fmt.Errorf("blob store: %w", err)
	}
	st.blobs = blob.New(d)
	return nil
}

// lockDataDir takes an exclusive lock so two servers never share one data dir (the
// embedded default is single-node; several nodes need PostgreSQL and S3).
func lockDataDir(dir string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, "coffer.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("data dir lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("data dir %s is in use by another coffer process", dir)
	}
	return f, nil
}

// presignSigner builds the presigned-URL signer: an explicit secret, else one derived
// from the admin secret (shared by every node that shares the admin secret), else a
// random key kept in the data dir.
func presignSigner(c *serveConfig) (*auth.Signer, error) {
	cur, err := presignKey(c)
	if err != nil {
		return nil, err
	}
	keys := map[string][]byte{keyID(cur): cur}
	for _, p := range c.PresignPrevious {
		if len(p) < 32 {
			return nil, fmt.Errorf("--presign-previous-secrets: every key must be at least 32 bytes")
		}
		keys[keyID([]byte(p))] = []byte(p)
	}
	return auth.NewSigner(keyID(cur), keys)
}

func presignKey(c *serveConfig) ([]byte, error) {
	if c.PresignSecret != "" {
		return []byte(c.PresignSecret), nil
	}
	if c.AdminSecret != "" {
		m := hmac.New(sha256.New, []byte(c.AdminSecret))
		m.Write([]byte("coffer presign key v1"))
		return m.Sum(nil), nil
	}
	path := filepath.Join(c.DataDir, "presign.key")
	if b, err := os.ReadFile(path); err == nil && len(b) >= 64 {
		return []byte(strings.TrimSpace(string(b))), nil
	}
	var k [32]byte
	_, _ = rand.Read(k[:])
	key := hex.EncodeToString(k[:])
	if err := os.MkdirAll(c.DataDir, 0o750); err != nil {
		return nil, err
	}
	if err := os.WriteFile(path, []byte(key+"\n"), 0o600); err != nil {
		return nil, fmt.Errorf("presign key: %w", err)
	}
	return []byte(key), nil
}

func keyID(k []byte) string {
	s := sha256.Sum256(k)
	return hex.EncodeToString(s[:4])
}

// server is a running coffer: e2e tests in this package drive it directly.
type server struct {
	cfg    *serveConfig
	log    *slog.Logger
	st     *stores
	svc    *service.Service
	http   *http.Server
	ln     net.Listener
	sweep  context.CancelFunc // stops the sweeper, the rules refresher and the bus
	bg     sync.WaitGroup     // those three, which Close waits for before the stores close
	authn  *auth.Authenticator
	bus    *cache.Bus // nil on SQLite: one node, nothing to hear
	images imaging.Engine
	// webhooks delivers this node's share of the outbox; webhooksDone closes when it
	// has stopped.
	webhooks     *webhook.Dispatcher
	webhooksDone <-chan struct{}
	// metricsHTTP serves /metrics on --metrics-listen (metricsLn); nil without it.
	metricsHTTP *http.Server
	metricsLn   net.Listener
}

func newServer(ctx context.Context, c *serveConfig, log *slog.Logger) (*server, error) {
	st, err := openStores(ctx, c)
	if err != nil {
		return nil, err
	}
	s := &server{cfg: c, log: log, st: st}
	if err := s.build(ctx); err != nil {
		st.Close()
		return nil, err
	}
	return s, nil
}

func (s *server) build(ctx context.Context) error {
	c := s.cfg
	scfg := service.DefaultConfig()
	scfg.StaleUploadAfter, scfg.SingleNode = c.StaleUploadAfter, c.usesSQLite()
	scfg.Content = cache.ContentConfig{MaxBytes: c.ContentCacheSize, MaxFile: c.ContentCacheMax}
	scfg.Variants.MaxBytes, scfg.Variants.MaxPerFile = c.VariantCacheSize, c.VariantsPerFile
	scfg.HideForbidden = c.Compat.HideForbidden
	svc, err := service.New(scfg, s.st.meta, s.st.blobs, s.log)
	if err != nil {
		return err
	}
	s.svc = svc
	if s.images, err = newImages(c, s.log); err != nil {
		return err
	}
	svc.UseImages(s.images)
	s.st.cache.OnRulesChanged(func() { _ = svc.ReloadRules(context.Background()) }) // a failure is logged and retried
	if err := s.buildWebhooks(svc); err != nil {
		return err
	}
	if err := s.buildScanning(ctx, svc); err != nil {
		return err
	}
	if !c.usesSQLite() {
		s.bus = cache.NewBus(c.DatabaseURL, s.st.cache, s.log)
	}
	if err := loadRules(ctx, svc, c.RulesFile); err != nil {
		return err
	}
	if rep, err := svc.StartupSweep(ctx); err != nil {
		return fmt.Errorf("startup sweep: %w", err)
	} else if rep.AbandonedUploads+rep.TempFiles+len(rep.OrphanBlobs) > 0 {
		s.log.Info("startup sweep", "abandoned_uploads", rep.AbandonedUploads, "temp_files", rep.TempFiles, "orphan_blobs", len(rep.OrphanBlobs))
	}
	acfg := auth.DefaultConfig()
	acfg.AdminSecret, acfg.UnauthorizedRole, acfg.JWTSecret, acfg.Logger = c.AdminSecret, c.UnauthorizedRole, c.JWTSecret, s.log
	acfg.JWTAdminRole = c.Compat.JWTAdminRole
	authn, err := auth.New(acfg)
	if err != nil {
		return err
	}
	s.authn = authn
	signer, err := presignSigner(c)
	if err != nil {
		return err
	}
	hcfg := httpapi.DefaultConfig()
	hcfg.PublicURL, hcfg.Version, hcfg.AccessLog = c.PublicURL, version, c.accessLog()
	hcfg.Metrics, hcfg.MetricsToken, hcfg.MetricsElsewhere = metrics.New(), c.MetricsToken, c.MetricsListen != ""
	pool := s.images.Pool()
	hcfg.Metrics.Watch(metrics.Sources{DB: s.st.db, Meta: s.st.cache, Content: svc.Content(), Variants: svc.Variants(),
		Blobs: s.st.blobs, Bus: s.bus, Webhooks: &s.webhooks.Stats, Images: func() (int, int) { return pool.Queued(), pool.Busy() },
		ImageWorkerStarts: workerStarts(s.images)})
	h, err := httpapi.New(hcfg, svc, authn, signer, s.log)
	if err != nil {
		return err
	}
	// Slow clients: headers must arrive within 10 s; bodies are read and responses
	// written under per-request deadlines that httpapi sets and extends as bytes move.
	s.http = &http.Server{
		Handler:           h,
		ConnContext:       httpapi.ConnContext,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
		Protocols:         httpapi.Protocols(c.H2C),
	}
	if c.MetricsListen != "" {
		mux := http.NewServeMux()
		mux.Handle("GET /metrics", metrics.RequireToken(c.MetricsToken, hcfg.Metrics.Handler()))
		s.metricsHTTP = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 120 * time.Second,
			ErrorLog: slog.NewLogLogger(s.log.Handler(), slog.LevelWarn)}
	}
	return nil
}

// listen binds the listen address.
func (s *server) listen() error {
	ln, err := net.Listen("tcp", s.cfg.Listen)
	if err != nil {
		return err
	}
	s.ln = httpapi.Listener(ln)
	if s.metricsHTTP != nil {
		if s.metricsLn, err = net.Listen("tcp", s.cfg.MetricsListen); err != nil {
			s.ln.Close()
			return fmt.Errorf("--metrics-listen: %w", err)
		}
	}
	return nil
}

// run serves until ctx ends, then drains in-flight requests within ShutdownTimeout.
func (s *server) run(ctx context.Context) error {
	sweepCtx, cancel := context.WithCancel(context.Background())
	s.sweep = cancel
	s.bg.Go(func() { s.svc.RunSweeper(sweepCtx, s.cfg.SweepInterval) })
	s.bg.Go(func() { s.svc.RefreshRules(sweepCtx, s.cfg.MetaCacheTTL) })
	if s.bus != nil {
		s.bg.Go(func() { s.bus.Run(sweepCtx) })
	}
	s.webhooksDone = s.runWebhooks(sweepCtx)
	errc := make(chan error, 2)
	go func() { errc <- s.http.Serve(s.ln) }()
	if s.metricsHTTP != nil {
		go func() { errc <- fmt.Errorf("metrics listener: %w", s.metricsHTTP.Serve(s.metricsLn)) }()
	}
	s.logSettings()
	s.log.Info("coffer listening", "addr", s.ln.Addr().String(), "version", version,
		"metadata", s.metaKind(), "blobs", s.blobKind())
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	s.log.Info("shutting down", "timeout", s.cfg.ShutdownTimeout.String())
	sctx, cancelT := context.WithTimeout(context.Background(), s.cfg.ShutdownTimeout)
	defer cancelT()
	if s.metricsHTTP != nil {
		_ = s.metricsHTTP.Close() // scrapes are short and need no draining
	}
	if err := s.http.Shutdown(sctx); err != nil {
		s.log.Warn("shutdown timed out; closing remaining connections", "err", err)
		s.http.Close()
	}
	return nil
}

func (s *server) metaKind() string {
	if s.cfg.usesSQLite() {
		return "sqlite"
	}
	return "postgres"
}

func (s *server) blobKind() string {
	if s.cfg.S3Endpoint != "" {
		return "s3"
	}
	return "fs"
}

func (s *server) Close() error {
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
	if s.images != nil {
		s.images.Close()
	}
	return s.st.Close()
}

func loadRules(ctx context.Context, svc *service.Service, path string) error {
	var doc []byte
	if path != "" {
		b, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("--rules: %w", err)
		}
		doc = b
	}
	if err := svc.LoadRules(ctx, doc); err != nil {
		return fmt.Errorf("rules: %w", err)
	}
	return nil
}
