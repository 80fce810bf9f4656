package coffer

import "time"

// Site is a tenant's web site as the metadata store keeps it: its id, the host names
// it answers and its document. The document (a site.Document in JSON: routes,
// targets, headers...) is opaque here; package site parses and validates it. Hosts
// are unique across every site of every tenant and never a tenant's API host.
type Site struct {
	TenantID string // the tenant it belongs to; DefaultTenantID for a deployment without tenants
	ID       string // unique within its tenant
	Hosts    []string
	// Doc is the site's document (JSON), stored as given.
	Doc       []byte
	CreatedAt time.Time
	UpdatedAt time.Time
}
