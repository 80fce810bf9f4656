package app

import (
	"net/http"
	"net/netip"
	"time"

	"github.com/coffer/coffer/service"
	"github.com/coffer/coffer/sites"
	"github.com/coffer/coffer/tenancy"
	"github.com/coffer/coffer/tenant"
)

// siteTenants is the tenancy runtime as the sites see it, read from Main at each
// call (the tenancy is built after the sites).
type siteTenants struct{ s *Main }

var _ sites.Tenants = siteTenants{}

// Host implements sites.Tenants: the host the tenant router reads.
func (t siteTenants) Host(r *http.Request) string {
	peer, _ := netip.ParseAddrPort(r.RemoteAddr)
	return t.s.tenancy.Resolver().EffectiveHost(r.Host, tenant.ForwardedHost(r.Header), peer.Addr().Unmap())
}

// Reserved implements sites.Tenants.
func (t siteTenants) Reserved(h string) (string, bool) { return t.s.tenancy.Resolver().Reserved(h) }

// Admit implements sites.Tenants with the tenant's graph: touched, its admission
// and its pacing.
func (t siteTenants) Admit(w http.ResponseWriter, r *http.Request, id string) (*service.Service, http.ResponseWriter, error) {
	g, err := t.s.tenancy.Graph(r.Context(), id)
	if err != nil {
		return nil, w, err
	}
	w, ok := g.Enter(w, r)
	if !ok {
		return nil, w, tenancy.ErrTooMany()
	}
	return g.Service, w, nil
}

// Fast implements sites.Tenants.
func (t siteTenants) Fast(id string, now time.Time) *service.Service {
	if g := t.s.tenancy.FastGraph(id, now); g != nil {
		return g.Service
	}
	return nil
}
