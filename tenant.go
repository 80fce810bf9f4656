package coffer

import (
	"time"
)

// DefaultTenantID is the implicit tenant of a deployment with no tenants configured:
// every row that existed before tenants did belongs to it, its blob keys carry no
// prefix and its URLs are unchanged.
const DefaultTenantID = ""

// TenantState says whether a tenant is served.
type TenantState string

// Tenant states.
const (
	TenantActive    TenantState = "active"    // served
	TenantSuspended TenantState = "suspended" // every request refused with a clear message; data kept
	TenantDeleting  TenantState = "deleting"  // refused like suspended; its data is being removed in the background
)

// Tenant is one isolated customer of a shared coffer fleet: its own buckets, files,
// rules, webhooks, credentials and storage target, chosen per request by host.
type Tenant struct {
	ID    string // [a-z0-9][a-z0-9-]{0,62}, not ending in "-"; never the default tenant's ""
	Hosts []string
	// Settings is the tenant's settings document (JSON); its shape and validation
	// belong to package tenant, the metadata store keeps it opaque.
	Settings  []byte
	State     TenantState
	Quota     Quota
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Quota bounds what a tenant stores; 0 means no bound.
type Quota struct {
	MaxBytes int64 // total size of its uploaded files
	MaxFiles int64 // number of its uploaded files
}

// Usage is what a tenant stores now: uploaded files only, counted in the same
// transaction as every change to them.
type Usage struct {
	Bytes int64
	Files int64
}

// TenantUpdate lists the fields to change; nil means unchanged.
type TenantUpdate struct {
	Hosts    *[]string
	Settings *[]byte
	State    *TenantState
	Quota    *Quota
}
