package sites

import (
	"context"
	"net"
	"net/url"
	"os"
	"strings"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/tenant"
)

// Which hosts a site may have. A site's host must not be, and must never become, a
// host the server answers on itself: a site there would take that host's API, RPC
// and console. So a site may not take
//   - an IP address, or a name a browser reads as one (tenant.IPLike): the server's
//     own addresses, and every listen address among them; localhost and
//     *.localhost, and this machine's host name;
//   - the host of --public-url, or of --listen, --metrics-listen, --debug-listen;
//   - with --tenants: a tenant's host, a default tenant's host
//     (--default-tenant-hosts: also the host serving /t/{tenant}/ paths), and any
//     name under a --tenant-wildcards pattern (and the pattern's own domain),
//     whether or not a tenant of that id exists yet (Tenants.Reserved).
// Requests are matched to sites by the host the tenant router reads
// (Runtime.requestHost: X-Forwarded-Host from a trusted proxy), never by another.
// The same rule holds at every request (siteFront): if a collision is made anyway
// (a flag changed, a site stored by an older version), the tenant wins and the
// site does not answer on that host. A tenant created or given a host a site has
// is refused (the store for exact hosts, the tenancy runtime for wildcard names,
// through SiteHost).

// OwnHosts returns the normalized hosts of the server's own addresses (the public
// URL and the listen addresses, host:port), each with what reserves it.
func OwnHosts(publicURL string, listens ...string) map[string]string {
	own := map[string]string{}
	add := func(raw, why string) {
		if h, err := tenant.NormalizeHost(raw); err == nil && raw != "" {
			own[h] = why
		}
	}
	add("localhost", "a loopback name")
	if name, err := os.Hostname(); err == nil {
		add(name, "this machine's host name")
	}
	if u, err := url.Parse(publicURL); err == nil {
		add(u.Host, "the server's public URL host (--public-url)")
	}
	for _, l := range listens {
		if h, _, err := net.SplitHostPort(l); err == nil {
			add(h, "a listen address of the server")
		}
	}
	return own
}

// reserved returns why site hosts may not include the normalized host h, "" if
// they may.
func (st *Runtime) reserved(h string) string {
	if tenant.IPLike(h) {
		return "an IP address (the server's own addresses serve its API)"
	}
	if why, ok := st.opt.Own[h]; ok {
		return why
	}
	if strings.HasSuffix(h, ".localhost") {
		return "a loopback name (*.localhost)"
	}
	if tn := st.opt.Tenants; tn != nil {
		if why, ok := tn.Reserved(h); ok {
			return why
		}
	}
	return ""
}

// checkHosts refuses (ECONFLICT, naming the host and the conflict) a site host
// that is reserved. The store refuses other tenants' exact hosts and other sites'.
func (st *Runtime) checkHosts(hosts []string) error {
	for _, h := range hosts {
		if why := st.reserved(h); why != "" {
			return coffer.Errorf(coffer.ECONFLICT, "host %q cannot be a site's: it is %s", h, why)
		}
	}
	return nil
}

// SiteHost reads the sites again (the other nodes' latest) and returns the first
// of the normalized hosts that is a site's, "" if none is: for the tenancy
// runtime, which refuses a tenant reached under a site's name.
func (st *Runtime) SiteHost(ctx context.Context, hosts []string) (string, error) {
	if err := st.reload(ctx); err != nil {
		return "", err
	}
	m := st.hosts.Load()
	if m == nil {
		return "", nil
	}
	for _, h := range hosts {
		if m.byHost[h] != nil {
			return h, nil
		}
	}
	return "", nil
}

// ForgetTenant drops what the sites hold of tenant id, deleted: its sites' edge
// entries and bucket names.
func (st *Runtime) ForgetTenant(id string) {
	st.edge.PurgeScopes(id + "/")
	st.names.dropTenant(id)
}
