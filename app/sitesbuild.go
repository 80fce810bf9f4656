package app

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"path/filepath"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/internal/httpserve"
	"github.com/coffer/coffer/meta"
	"github.com/coffer/coffer/site"
	"github.com/coffer/coffer/site/audit"
	"github.com/coffer/coffer/site/edge"
	"github.com/coffer/coffer/tenant"
)

// buildSites builds this node's sites (nil with --sites=false) and wires them to
// the invalidation bus and the metadata cache's write hook. Run starts reading them.
func (s *Main) buildSites(ctx context.Context) error {
	c := s.cfg.Sites
	if !c.On {
		return nil
	}
	reg, ok := s.st.base.(meta.SiteRegistry)
	if !ok {
		return fmt.Errorf("sites: the metadata store cannot keep sites")
	}
	st := &sites{s: s, reg: reg, kick: make(chan struct{}, 1), log: s.log.With("component", "sites"), own: ownHosts(*s.cfg),
		client: &http.Client{Transport: s.guardTransport, CheckRedirect: noRedirects}}
	st.ctx, st.cancel = context.WithCancel(context.Background())
	if s.bus != nil {
		st.pub = s.bus
	}
	if s.cfg.Tenants.Key != "" {
		key, err := base64.StdEncoding.DecodeString(s.cfg.Tenants.Key)
		if err != nil || len(key) != 32 {
			return fmt.Errorf("--tenant-key must be 32 bytes in base64 (head -c 32 /dev/urandom | base64)")
		}
		if st.sealer, err = tenant.NewSealer(key); err != nil {
			return err
		}
	}
	var err error
	if st.names, err = newNameCache(); err != nil {
		return err
	}
	if err := st.buildEdge(c); err != nil {
		return err
	}
	if err := st.buildAudit(c); err != nil {
		return err
	}
	st.buildHandler()
	s.st.cache.OnSitesChanged(func(string) { st.changed() })
	s.st.cache.OnPurge(st.heard)
	s.st.cache.OnFileWritten(st.fileWritten)
	s.sites = st
	return st.reload(ctx)
}

// noRedirects makes a client return a redirect as the answer instead of following it.
func noRedirects(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// buildEdge opens the pull-through cache.
func (st *sites) buildEdge(c SitesConfig) error {
	ecfg := edge.DefaultConfig()
	ecfg.Dir = c.EdgeDir
	if ecfg.Dir == "" {
		ecfg.Dir = filepath.Join(st.s.cfg.DataDir, "edge")
	}
	ecfg.MaxBytes = c.EdgeSize
	if c.EdgeMaxObject > 0 {
		ecfg.MaxObjectSize = c.EdgeMaxObject
	}
	e, err := edge.New(ecfg, st.log)
	if err != nil {
		return err
	}
	st.edge = e
	return nil
}

// buildAudit opens the audit log (none with AuditDir "-").
func (st *sites) buildAudit(c SitesConfig) error {
	if c.AuditDir == "-" {
		return nil
	}
	acfg := audit.DefaultConfig()
	acfg.Dir = c.AuditDir
	if acfg.Dir == "" {
		acfg.Dir = filepath.Join(st.s.cfg.DataDir, "audit")
	}
	if c.AuditSize > 0 {
		acfg.MaxTotalBytes = c.AuditSize
	}
	acfg.Collector.URL = c.AuditCollector
	// The collector is the operator's (a flag), not a tenant's setting: no SSRF guard.
	a, err := audit.New(acfg, &http.Client{Timeout: 30 * time.Second}, st.log)
	if err != nil {
		return err
	}
	st.audit = a
	return nil
}

// buildHandler builds the serving handler and the Frame it runs in.
func (st *sites) buildHandler() {
	h := st.s.hcfg
	st.frame = &httpserve.Frame{Routes: http.HandlerFunc(st.serve), Encode: plainError, IDs: httpserve.NewIDs(),
		Log: st.log, Access: httpserve.NewAccessLog(h.AccessLog, st.log), ReadIdleTimeout: h.ReadIdleTimeout,
		WriteTimeout: h.WriteTimeout, MinWriteRate: h.MinWriteRate}
	if h.Metrics != nil {
		st.frame.Begin = h.Metrics.Begin
	}
	hcfg := site.HandlerConfig{Edge: st.edge, Log: st.log, AllowWrite: st.frame.AllowWrite}
	if st.audit != nil {
		hcfg.Audit = st.audit.Write
	}
	st.handler = site.NewHandler(hcfg)
}

// plainError writes a site's error answers: short plain text, as web servers do.
func plainError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(msg + "\n"))
}

// close stops the purge webhooks' attempts and the edge cache, and drains the audit
// log within ctx.
func (st *sites) close(ctx context.Context) error {
	st.cancel()
	st.hooks.Wait()
	var err error
	if st.audit != nil {
		err = st.audit.Close(ctx)
	}
	if e := st.edge.Close(); err == nil {
		err = e
	}
	return err
}

// needSealer returns an error naming field when a sealed secret is set and this
// server has no --tenant-key to open it.
func (st *sites) needSealer(sealed, field string) error {
	if sealed != "" && st.sealer == nil {
		return coffer.Errorf(coffer.EINVALID, "%s: sealed secrets need the server's --tenant-key", field)
	}
	return nil
}

// originFactory builds the upstream origins of sites (site.OriginFactory): HTTP
// origins and S3 endpoints are dialed through the webhook SSRF guard, since a
// site's targets are a tenant's settings.
type originFactory struct {
	st   *sites
	site string // the site's id, which its sealed secrets are bound to
}

// HTTP implements site.OriginFactory.
func (f originFactory) HTTP(o site.HTTPOrigin) (site.Origin, error) {
	return edge.NewHTTPOrigin(o, f.st.client)
}

// S3 implements site.OriginFactory.
func (f originFactory) S3(o site.S3Origin, tenantID string) (site.Origin, error) {
	if err := f.st.needSealer(o.SecretAccessKey, "s3.secretAccessKey"); err != nil {
		return nil, err
	}
	secret, err := o.OpenSecretAccessKey(f.st.sealer, tenantID)
	if err != nil {
		return nil, err
	}
	return edge.NewS3Origin(o, secret, f.st.s.guardTransport)
}
