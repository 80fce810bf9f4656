// Package sites runs every tenant's sites on a node: the host → site map (read
// from the metadata store at start, every Refresh and at once on a change), the
// edge cache of upstream objects, the audit log of the requests served, purges
// (here, to the other nodes through the bus, and to a site's purge webhooks), the
// name cache of bucket files, and the handler in front of the faces (Front) that
// answers a site's host. Package site holds what one site is (its document,
// compiled form and request handling); this package is the runtime around it.
//
// The runtime is built from a Config and Options (New): the metadata store, the
// default tenant's service, the tenancy runtime (Tenants: a tenant's service, its
// admission and pacing, the hosts it reserves), the bus, the SSRF-guarded
// transport. app connects it to the metadata cache's hooks (Changed, Heard,
// FileWritten) and the router; it knows no face. The site and audit use cases
// (service.SiteAdmin, service.Audit) run over it: Admin and QueryAudit.
package sites
