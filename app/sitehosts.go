package app

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
//     whether or not a tenant of that id exists yet (tenant.Resolver.Reserved).
// Requests are matched to sites by the host the tenant router reads
// (sites.requestHost: X-Forwarded-Host from a trusted proxy), never by another.
// The same rule holds at every request (siteFront): if a collision is made anyway
// (a flag changed, a site stored by an older version), the tenant wins and the
// site does not answer on that host. A tenant created or given a host a site has
// is refused (the store for exact hosts, firstSiteHost for wildcard names).

// ownHosts returns the normalized hosts of the server's own addresses (public URL
// and listen addresses), each with what reserves it.
func ownHosts(c Config) map[string]string {
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
	if u, err := url.Parse(c.PublicURL); err == nil {
		add(u.Host, "the server's public URL host (--public-url)")
	}
	for _, l := range []string{c.Listen, c.MetricsListen, c.DebugListen} {
		if h, _, err := net.SplitHostPort(l); err == nil {
			add(h, "a listen address of the server")
		}
	}
	return own
}

// reserved returns why site hosts may not include the normalized host h, "" if
// they may.
func (st *sites) reserved(h string) string {
	if tenant.IPLike(h) {
		return "an IP address (the server's own addresses serve its API)"
	}
	if why, ok := st.own[h]; ok {
		return why
	}
	if strings.HasSuffix(h, ".localhost") {
		return "a loopback name (*.localhost)"
	}
	if tn := st.s.tenancy; tn != nil {
		if why, ok := tn.Resolver().Reserved(h); ok {
			return why
		}
	}
	return ""
}

// checkHosts refuses (ECONFLICT, naming the host and the conflict) a site host
// that is reserved. The store refuses other tenants' exact hosts and other sites'.
func (st *sites) checkHosts(hosts []string) error {
	for _, h := range hosts {
		if why := st.reserved(h); why != "" {
			return coffer.Errorf(coffer.ECONFLICT, "host %q cannot be a site's: it is %s", h, why)
		}
	}
	return nil
}

// firstSiteHost returns the first of hosts that is a site's, "" if none, after
// reading the other nodes' latest sites (tenancy.Deps.SiteHost: a new tenant's
// names under the tenant wildcards).
func (st *sites) firstSiteHost(ctx context.Context, hosts []string) (string, error) {
	if err := st.reload(ctx); err != nil {
		return "", err
	}
	if m := st.hosts.Load(); m != nil {
		for _, h := range hosts {
			if m.byHost[h] != nil {
				return h, nil
			}
		}
	}
	return "", nil
}
