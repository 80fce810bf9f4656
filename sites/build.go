package sites

import (
	"context"
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
)

// New builds the sites runtime of this node from c and o and reads the sites; Run
// keeps them current. The caller connects it to the metadata cache's hooks
// (Changed, Heard, FileWritten), serves through Front and closes it.
func New(ctx context.Context, c Config, o Options) (*Runtime, error) {
	reg, ok := o.Store.(meta.SiteRegistry)
	if !ok {
		return nil, fmt.Errorf("sites: the metadata store cannot keep sites")
	}
	st := &Runtime{cfg: c, opt: o, reg: reg, kick: make(chan struct{}, 1), log: o.Log,
		client: &http.Client{Transport: o.Transport, CheckRedirect: noRedirects}}
	st.ctx, st.cancel = context.WithCancel(context.Background())
	var err error
	if st.names, err = newNameCache(); err != nil {
		return nil, err
	}
	if err := st.buildEdge(c); err != nil {
		return nil, err
	}
	if err := st.buildAudit(c); err != nil {
		return nil, err
	}
	st.buildHandler()
	if err := st.reload(ctx); err != nil {
		_ = st.Close(ctx)
		return nil, err
	}
	return st, nil
}

// noRedirects makes a client return a redirect as the answer instead of following it.
func noRedirects(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// buildEdge opens the pull-through cache.
func (st *Runtime) buildEdge(c Config) error {
	ecfg := edge.DefaultConfig()
	ecfg.Dir = c.EdgeDir
	if ecfg.Dir == "" {
		ecfg.Dir = filepath.Join(st.opt.DataDir, "edge")
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
func (st *Runtime) buildAudit(c Config) error {
	if c.AuditDir == "-" {
		return nil
	}
	acfg := audit.DefaultConfig()
	acfg.Dir = c.AuditDir
	if acfg.Dir == "" {
		acfg.Dir = filepath.Join(st.opt.DataDir, "audit")
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
func (st *Runtime) buildHandler() {
	h := st.opt.Serving
	st.frame = &httpserve.Frame{Routes: http.HandlerFunc(st.serve), Encode: httpserve.PlainText, IDs: httpserve.NewIDs(),
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

// Close stops the purge webhooks' attempts and the edge cache, and drains the audit
// log within ctx.
func (st *Runtime) Close(ctx context.Context) error {
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
func (st *Runtime) needSealer(sealed, field string) error {
	if sealed != "" && st.opt.Sealer == nil {
		return coffer.Errorf(coffer.EINVALID, "%s: sealed secrets need the server's --tenant-key", field)
	}
	return nil
}

// originFactory builds the upstream origins of sites (site.OriginFactory): HTTP
// origins and S3 endpoints are dialed through the SSRF guard, since a
// site's targets are a tenant's settings.
type originFactory struct {
	st   *Runtime
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
	secret, err := o.OpenSecretAccessKey(f.st.opt.Sealer, tenantID)
	if err != nil {
		return nil, err
	}
	return edge.NewS3Origin(o, secret, f.st.opt.Transport)
}
