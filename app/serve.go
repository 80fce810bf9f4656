package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/auth"
	"github.com/coffer/coffer/blob"
	"github.com/coffer/coffer/cache"
	"github.com/coffer/coffer/imaging/remote"
	"github.com/coffer/coffer/internal/httpserve"
	"github.com/coffer/coffer/meta"
	"github.com/coffer/coffer/metrics"
	"github.com/coffer/coffer/rpcapi"
	"github.com/coffer/coffer/service"
	"github.com/coffer/coffer/tenancy"
)

// defaultSpec is the default tenant's graph: the server's service, secrets and
// presign keys, and its management API built at once with this node's state.
func (s *Main) defaultSpec() (graphSpec, error) {
	c := s.cfg
	spec := graphSpec{tenant: coffer.DefaultTenantID, svc: s.svc, auth: auth.DefaultConfig(), signer: s.parts.Signer,
		log: s.log, publicURL: s.hcfg.PublicURL, metricsElsewhere: s.hcfg.MetricsElsewhere, node: node{s}}
	a := &spec.auth
	a.AdminSecret, a.UnauthorizedRole, a.JWTSecret, a.Logger = c.AdminSecret, c.UnauthorizedRole, c.JWTSecret, s.log
	a.JWTAdminRole = c.Compat.JWTAdminRole
	if c.Tenants.On {
		spec.tenants, spec.platformSecret = s.tenancy.Admin(), c.Tenants.PlatformSecret
	}
	var err error
	if spec.signer == nil {
		spec.signer, err = auth.PresignSigner(auth.PresignKeys{Secret: c.PresignSecret, AdminSecret: c.AdminSecret,
			DataDir: c.DataDir, Previous: c.PresignPrevious})
	}
	return spec, err
}

// buildHTTP builds the default tenant's graph, the tenancy runtime, the metrics and
// the HTTP servers (the API and, with --metrics-listen and --debug-listen, the
// metrics and the pprof ones).
func (s *Main) buildHTTP() error {
	c := s.cfg
	s.setFaceConfig(s.newMetrics())
	m := s.hcfg.Metrics
	if err := s.buildSites(context.Background()); err != nil {
		return err
	}
	if st := s.sites; st != nil {
		st.RegisterMetrics(m)
	}
	if c.Tenants.On {
		if err := s.buildTenancy(context.Background()); err != nil {
			return err
		}
		s.tenancy.RegisterMetrics(m)
	}
	if err := s.buildConsole(); err != nil {
		return err
	}
	spec, err := s.defaultSpec()
	if err != nil {
		return err
	}
	def, err := s.buildGraph(spec)
	if err != nil {
		return err
	}
	s.authn = def.Auth
	var handler http.Handler = def.Faces
	if s.tenancy != nil {
		handler = s.tenancy.Router(def.Faces)
	}
	if s.sites != nil {
		handler = s.sites.Front(handler)
	}
	handler = httpserve.RefuseUserinfo{Next: handler}
	// Slow clients: headers must arrive within 10 s; bodies are read and responses
	// written under per-request deadlines that the faces set and extends as bytes move.
	s.http = &http.Server{
		Handler:           handler,
		ConnContext:       connContext(rpcapi.NewSources()),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
		Protocols:         httpserve.Protocols(c.H2C),
	}
	if c.MetricsListen != "" {
		mux := http.NewServeMux()
		mux.Handle("GET /metrics", metrics.RequireToken(c.MetricsToken, m.Handler()))
		s.metricsHTTP = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 120 * time.Second,
			ErrorLog: slog.NewLogLogger(s.log.Handler(), slog.LevelWarn)}
	}
	if c.DebugListen != "" {
		s.debugHTTP = httpserve.DebugServer(s.log)
	}
	return nil
}

// serveAPI serves the API port: through the HTTP/1.1 fast path, which passes what it
// does not answer to the http.Server, or with --fast-path=false by the http.Server
// alone. A serving error goes to errc.
func (s *Main) serveAPI(errc chan<- error) {
	fh, ok := s.http.Handler.(httpserve.FastHandler)
	if !s.cfg.FastPath || !ok {
		go func() { errc <- s.http.Serve(s.ln) }()
		return
	}
	s.fast = httpserve.NewFastServer(s.ln, fh, s.http.IdleTimeout, s.http.ReadHeaderTimeout, s.log)
	go func() { errc <- s.http.Serve(s.fast.Fallback()) }()
	go func() {
		if err := s.fast.Serve(); !errors.Is(err, net.ErrClosed) {
			errc <- err
		}
	}()
}

// fastStats reports the fast path's counts, zero while it does not run.
func (s *Main) fastStats() (answered, handedOff int64) {
	if f := s.fast; f != nil {
		return f.Stats()
	}
	return 0, 0
}

// newMetrics returns the metrics registry, watching every component's counters.
func (s *Main) newMetrics() *metrics.Metrics {
	m := metrics.New()
	pool := s.images.Pool()
	src := metrics.Sources{DB: s.st.db, Meta: s.st.cache, Content: s.st.content, Variants: s.st.variants,
		Blobs: s.st.blobs, Webhooks: &s.webhooks.Stats, Images: func() (int, int) { return pool.Queued(), pool.Busy() },
		ImageWorkerStarts: remote.Starts(s.images), ImageRemoteWorkers: remoteWorkerStats(s.images), FastPath: s.fastStats}
	if s.bus != nil {
		src.Bus = s.bus
	}
	m.Watch(src)
	return m
}

// Listen binds the listen address and, with --metrics-listen and --debug-listen,
// the metrics and the debug addresses.
func (s *Main) Listen() error {
	ln, err := net.Listen("tcp", s.cfg.Listen)
	if err != nil {
		return err
	}
	s.ln = httpserve.Listener(ln)
	if s.metricsHTTP != nil {
		if s.metricsLn, err = net.Listen("tcp", s.cfg.MetricsListen); err != nil {
			s.ln.Close()
			return fmt.Errorf("--metrics-listen: %w", err)
		}
	}
	if s.debugHTTP != nil {
		if s.debugLn, err = net.Listen("tcp", s.cfg.DebugListen); err != nil {
			s.ln.Close()
			if s.metricsLn != nil {
				s.metricsLn.Close()
			}
			return fmt.Errorf("--debug-listen: %w", err)
		}
	}
	return nil
}

// DebugAddr returns the address --debug-listen bound, once Listen has returned; nil
// without it.
func (s *Main) DebugAddr() net.Addr {
	if s.debugLn == nil {
		return nil
	}
	return s.debugLn.Addr()
}

// Handler returns the API port's handler, the router of its faces (tests call it
// without a connection, or add a face to it with api.New).
func (s *Main) Handler() http.Handler { return s.http.Handler }

// Service returns the service the API serves.
func (s *Main) Service() *service.Service { return s.svc }

// Blobs returns the blob store.
func (s *Main) Blobs() *blob.Store { return s.st.blobs }

// DBCalls returns the counter of the metadata store calls that reach the database.
func (s *Main) DBCalls() *meta.Counting { return s.st.db }

// MetaCache returns the metadata cache over the database.
func (s *Main) MetaCache() *cache.Meta { return s.st.cache }

// Addr returns the address the API listens on, once Listen has returned.
func (s *Main) Addr() net.Addr { return s.ln.Addr() }

// Run starts the background work and serves until ctx ends, then drains in-flight
// requests within ShutdownTimeout. Listen must have been called.
func (s *Main) Run(ctx context.Context) error {
	sweepCtx, cancel := context.WithCancel(context.Background())
	s.sweep = cancel
	s.bg.Go(func() { s.svc.RunSweeper(sweepCtx, s.cfg.SweepInterval) })
	s.bg.Go(func() { s.svc.RefreshRules(sweepCtx, s.cfg.MetaCacheTTL) })
	if s.bus != nil {
		s.bg.Go(func() { s.bus.Run(sweepCtx, s.st.cache.Handle) })
	}
	if tn := s.tenancy; tn != nil {
		s.bg.Go(func() { tn.Run(sweepCtx, tenancy.Refresh, s.cfg.SweepInterval) })
	}
	if st := s.sites; st != nil {
		s.bg.Go(func() { st.Run(sweepCtx) })
	}
	s.webhooksDone = s.runWebhooks(sweepCtx)
	errc := make(chan error, 4)
	s.serveAPI(errc)
	if s.metricsHTTP != nil {
		go func() { errc <- fmt.Errorf("metrics listener: %w", s.metricsHTTP.Serve(s.metricsLn)) }()
	}
	if s.debugHTTP != nil {
		go func() { errc <- fmt.Errorf("debug listener: %w", s.debugHTTP.Serve(s.debugLn)) }()
		s.log.Info("pprof listening", "addr", s.debugLn.Addr().String())
	}
	s.logSettings()
	s.log.Info("coffer listening", "addr", s.ln.Addr().String(), "version", s.cfg.Version,
		"metadata", s.metaKind(), "blobs", s.blobKind())
	s.logConsole()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	s.shutdown()
	return nil
}

// Start listens and runs the server in the background, as Listen and Run do; stop
// ends it (draining requests in flight), waits for Run, closes the server and
// returns the errors of Run and Close. If Start fails, it has closed the server. For
// tests and programs embedding coffer.
func (s *Main) Start() (stop func() error, err error) {
	if err := s.Listen(); err != nil {
		return nil, errors.Join(err, s.Close())
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	return func() error {
		cancel()
		err := <-done
		return errors.Join(err, s.Close())
	}, nil
}

// shutdown stops the listeners, draining in-flight API requests within
// ShutdownTimeout.
func (s *Main) shutdown() {
	s.log.Info("shutting down", "timeout", s.cfg.ShutdownTimeout.String())
	sctx, cancelT := context.WithTimeout(context.Background(), s.cfg.ShutdownTimeout)
	defer cancelT()
	if s.metricsHTTP != nil {
		_ = s.metricsHTTP.Close() // scrapes are short and need no draining
	}
	if s.debugHTTP != nil {
		_ = s.debugHTTP.Close() // a profile in progress is cut short
	}
	// The fast path drains first, while the http.Server still takes the connections
	// it hands off (a request in flight there may be declined and go to net/http);
	// meanwhile net/http ends each of its connections after the answer in flight and
	// closes idle ones, as its Shutdown would.
	if s.fast != nil {
		s.http.SetKeepAlivesEnabled(false)
		if err := s.fast.Shutdown(sctx); err != nil {
			s.log.Warn("shutdown timed out on the fast path; closed its connections", "err", err)
		}
	}
	if err := s.http.Shutdown(sctx); err != nil {
		s.log.Warn("shutdown timed out; closing remaining connections", "err", err)
		s.http.Close()
	}
}

// metaKind names the metadata database for the start-up log.
func (s *Main) metaKind() string {
	if s.cfg.UsesSQLite() {
		return "sqlite"
	}
	return "postgres"
}

// blobKind names the blob store for the start-up log.
func (s *Main) blobKind() string {
	if s.cfg.S3Endpoint != "" {
		return "s3"
	}
	return "fs"
}

// connContext gives each connection of the API port what its handlers keep per
// connection: the connection itself (httpserve: batched writes, sendfile) and the
// RPC face's decoding budget (rpcapi, over every tenant's face), whose anonymous
// callers also count at their address in src, the server's.
func connContext(src *rpcapi.Sources) func(context.Context, net.Conn) context.Context {
	return func(ctx context.Context, c net.Conn) context.Context {
		return src.ConnContext(httpserve.ConnContext(ctx, c), c)
	}
}
