package app

import (
	"context"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/service"
	"github.com/coffer/coffer/sites"
	"github.com/coffer/coffer/tenant"
)

// siteTenants is the tenancy runtime as the sites see it, read from Main at each
// call (the tenancy is built after the sites).
type siteTenants struct{ s *Main }

var _ sites.Tenants = siteTenants{}

// Host implements sites.Tenants: the host the tenant router reads.
func (t siteTenants) Host(r *http.Request) string {
	peer, _ := netip.ParseAddrPort(r.RemoteAddr)
	return t.s.tenancy.resolver.Load().EffectiveHost(r.Host, tenant.ForwardedHost(r.Header), peer.Addr().Unmap())
}

// Reserved implements sites.Tenants.
func (t siteTenants) Reserved(h string) (string, bool) {
	return t.s.tenancy.resolver.Load().Reserved(h)
}

// Admit implements sites.Tenants with the tenant's graph: touched, its admission
// and its pacing.
func (t siteTenants) Admit(w http.ResponseWriter, r *http.Request, id string) (*service.Service, http.ResponseWriter, error) {
	g, err := t.s.tenancy.graph(r.Context(), id)
	if err != nil {
		return nil, w, err
	}
	g.touch(time.Now().Unix())
	if !g.admit(w, r) {
		return nil, w, errTooMany()
	}
	if g.bw != nil {
		w = &pacedResponse{ResponseWriter: w, body: g.bw.Writer(r.Context(), w)}
	}
	return g.svc, w, nil
}

// Fast implements sites.Tenants.
func (t siteTenants) Fast(id string, now time.Time) *service.Service {
	if g := t.s.tenancy.fastGraph(id, now); g != nil {
		return g.svc
	}
	return nil
}

// checkTenantNames refuses (ECONFLICT) a new tenant id whose names under the
// tenant wildcards a site has (possible only if a wildcard was added after the
// site was made): the site would lose them at once.
func (tn *tenancy) checkTenantNames(ctx context.Context, id string) error {
	st := tn.s.sites
	if st == nil {
		return nil
	}
	var names []string
	for _, w := range tn.cfg.Wildcards {
		if h, err := tenant.NormalizeHost(id + "." + strings.TrimPrefix(w, "*.")); err == nil {
			names = append(names, h)
		}
	}
	h, err := st.SiteHost(ctx, names) // the other nodes' latest sites
	if err != nil || h == "" {
		return err
	}
	return coffer.Errorf(coffer.ECONFLICT, "tenant %q would be reached as %q, which belongs to a site", id, h)
}
