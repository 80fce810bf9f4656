package app

import (
	"context"
	"encoding/base64"
	"fmt"

	"github.com/coffer/coffer/sites"
	"github.com/coffer/coffer/tenant"
)

// buildSites builds this node's sites runtime (nil with --sites=false) and connects
// it to the metadata cache's hooks; Run keeps it current, buildHTTP puts its front
// before the faces.
func (s *Main) buildSites(ctx context.Context) error {
	c := s.cfg
	if !c.Sites.On {
		return nil
	}
	h := s.hcfg
	o := sites.Options{Store: s.st.base, Default: s.svc, Transport: s.guardTransport, DataDir: c.DataDir,
		Own: sites.OwnHosts(c.PublicURL, c.Listen, c.MetricsListen, c.DebugListen), Log: s.log.With("component", "sites"),
		Serving: sites.Serving{AccessLog: h.AccessLog, Metrics: h.Metrics, ReadIdleTimeout: h.ReadIdleTimeout,
			WriteTimeout: h.WriteTimeout, MinWriteRate: h.MinWriteRate}}
	if s.bus != nil {
		o.Bus = s.bus
	}
	if c.Tenants.On {
		o.Tenants = siteTenants{s}
	}
	if c.Tenants.Key != "" {
		key, err := base64.StdEncoding.DecodeString(c.Tenants.Key)
		if err != nil || len(key) != 32 {
			return fmt.Errorf("--tenant-key must be 32 bytes in base64 (head -c 32 /dev/urandom | base64)")
		}
		if o.Sealer, err = tenant.NewSealer(key); err != nil {
			return err
		}
	}
	st, err := sites.New(ctx, c.Sites, o)
	if err != nil {
		return err
	}
	s.st.cache.OnSitesChanged(func(string) { st.Changed() })
	s.st.cache.OnPurge(st.Heard)
	s.st.cache.OnFileWritten(st.FileWritten)
	s.sites = st
	return nil
}
