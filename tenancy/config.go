package tenancy

import (
	"encoding/base64"
	"fmt"
	"net/netip"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/tenant"
)

// Config is the settings of multi-tenancy (--tenants and the flags beside it).
type Config struct {
	// On routes every request to a tenant by its host (tenants are managed through
	// the management API's TenantService); off, coffer is the single implicit
	// tenant it always was.
	On bool
	// PlatformSecret is the platform admin's credential (TenantService), distinct
	// from every tenant's admin secret.
	PlatformSecret string
	// Key seals the secrets in tenants' settings (AES-256-GCM) and derives each
	// tenant's default presign key: 32 bytes, base64. Every node needs the same.
	Key string
	// DefaultHosts are the hosts of the default tenant: the deployment's own data
	// as it was before tenants (its old host names, so existing clients keep
	// working).
	DefaultHosts []string
	// TrustedProxies are the CIDR prefixes of peers whose X-Forwarded-Host is
	// believed.
	TrustedProxies []string
	// Wildcards are one-label patterns ("*.files.example.com") whose label is the
	// tenant id: acme.files.example.com is tenant acme, with no host of its own.
	Wildcards []string
	// MetricsLabels bounds the tenants labelled in the per-tenant metrics; the
	// others count as "other".
	MetricsLabels int
	// MaxGraphs bounds the tenants whose object graphs are held at once (each
	// ~100-250 KB); past it the least recently used one is dropped and built again
	// on its next request (a few milliseconds).
	MaxGraphs int
	// PathPrefix also selects tenants by a /t/{tenant}/ path prefix, for deployments
	// without DNS names per tenant.
	PathPrefix bool
}

// parsed is what Config's flags say once checked.
type parsed struct {
	key      []byte
	defHosts []string
	opts     tenant.Options
}

// parse checks c (with flag names in its errors) and decodes it.
func (c Config) parse() (parsed, error) {
	key, err := base64.StdEncoding.DecodeString(c.Key)
	if err != nil || len(key) != 32 {
		return parsed{}, fmt.Errorf("--tenant-key must be 32 bytes in base64 (head -c 32 /dev/urandom | base64)")
	}
	if c.PlatformSecret == "" {
		return parsed{}, fmt.Errorf("--tenants needs --platform-secret: the platform admin's credential for managing tenants")
	}
	p := parsed{key: key, opts: tenant.Options{PathPrefix: c.PathPrefix, Wildcards: c.Wildcards}}
	for _, h := range c.DefaultHosts {
		n, err := tenant.NormalizeHost(h)
		if err != nil {
			return parsed{}, fmt.Errorf("--default-tenant-hosts: %q: %s", h, coffer.ErrorMessage(err))
		}
		p.defHosts = append(p.defHosts, n)
	}
	for _, s := range c.TrustedProxies {
		pfx, err := netip.ParsePrefix(s)
		if err != nil {
			return parsed{}, fmt.Errorf("--trusted-proxies: %q is not a CIDR prefix like 10.0.0.0/8", s)
		}
		p.opts.TrustedProxies = append(p.opts.TrustedProxies, pfx.Masked())
	}
	return p, nil
}
