package main

import (
	"github.com/coffer/coffer/app"
	"github.com/spf13/pflag"
)

// tenantFlags registers the flags of multi-tenancy into c.
func tenantFlags(fs *pflag.FlagSet, c *app.TenantsConfig) {
	fs.BoolVar(&c.On, "tenants", false, "serve many tenants, each chosen by the request's host (managed through the management API's TenantService); off = one implicit tenant, as always")
	fs.StringVar(&c.PlatformSecret, "platform-secret", "", "with --tenants: the platform admin's credential for TenantService (header x-coffer-platform-secret), distinct from every tenant's admin secret")
	fs.StringVar(&c.Key, "tenant-key", "", "with --tenants: 32 bytes in base64 that seal the secrets in tenants' settings and derive their presign keys; the same on every node (head -c 32 /dev/urandom | base64)")
	fs.StringSliceVar(&c.DefaultHosts, "default-tenant-hosts", nil, "with --tenants: hosts of the default tenant, whose data is the deployment's as it was before tenants (its old host names)")
	fs.StringSliceVar(&c.Wildcards, "tenant-wildcards", nil, "with --tenants: one-label host patterns like *.files.example.com whose label is the tenant id (acme.files.example.com is tenant acme)")
	fs.StringSliceVar(&c.TrustedProxies, "trusted-proxies", nil, "with --tenants: CIDR prefixes of proxies whose X-Forwarded-Host chooses the tenant")
	fs.IntVar(&c.MaxGraphs, "tenant-graphs", app.DefaultConfig().Tenants.MaxGraphs, "with --tenants: tenants whose object graphs (services, credentials, faces: ~100-250 KB each) are held at once; the least recently used is dropped past it and rebuilt on its next request")
	fs.IntVar(&c.MetricsLabels, "tenant-metrics-labels", app.DefaultConfig().Tenants.MetricsLabels, "with --tenants: tenants labelled in coffer_tenant_* metrics (the busiest when first seen); the others are summed as \"other\"")
	fs.BoolVar(&c.PathPrefix, "tenant-path-prefix", false, "with --tenants: also choose tenants by a /t/{tenant}/ path prefix (deployments without a host name per tenant)")
}
