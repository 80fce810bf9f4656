package meta

import (
	"context"

	"github.com/coffer/coffer"
)

// Sites is a tenant view's sites (both SQL stores' views offer it, the default
// tenant's included): web sites bound to host names, each with an opaque document
// (see coffer.Site). Host names are unique across the sites of every tenant and
// across the tenants' API hosts (meta.Tenants): a host routes to one place only.
// Another tenant's site answers as a missing one (ENOTFOUND). The store does not
// check the syntax of ids, hosts or documents (package site does).
type Sites interface {
	// CreateSite stores site (ID, Hosts, Doc set by the caller) for the view's tenant,
	// setting TenantID, CreatedAt/UpdatedAt and Hosts sorted without repeats.
	// ECONFLICT if the tenant has a site with that id, or if a host is another
	// site's (of any tenant) or a tenant's API host (naming the host).
	CreateSite(ctx context.Context, site *coffer.Site) error
	// GetSite returns ENOTFOUND if the tenant has no such site.
	GetSite(ctx context.Context, id string) (*coffer.Site, error)
	// ListSites returns the tenant's sites ordered by id.
	ListSites(ctx context.Context) ([]*coffer.Site, error)
	// UpdateSite replaces the site's hosts (sorted without repeats) and document and
	// bumps UpdatedAt; ENOTFOUND if missing, ECONFLICT as CreateSite for a host
	// (nothing changed).
	UpdateSite(ctx context.Context, id string, hosts []string, doc []byte) (*coffer.Site, error)
	// DeleteSite removes the site and frees its hosts; ENOTFOUND if missing.
	DeleteSite(ctx context.Context, id string) error
}

// SiteRegistry is the shared store's view of every tenant's sites (both SQL stores
// offer it): what a node builds its host → site map from.
type SiteRegistry interface {
	// AllSites returns every site of every tenant, ordered by (tenant, id).
	AllSites(ctx context.Context) ([]*coffer.Site, error)
}
