package rpcapi

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"net/http"

	"github.com/coffer/coffer"
)

// HeaderPlatformSecret carries the platform admin's credential, the only one
// TenantService accepts. It is not Authorization (a Bearer value there is read as a
// tenant's JWT) nor an X-Hasura-* header (those are a tenant's credentials and
// session variables).
const HeaderPlatformSecret = "X-Coffer-Platform-Secret"

// platformCheck returns nil if hdr carries the platform secret; else EFORBIDDEN on
// a tenant's hosts (Config.TenantHost), EPRECONDITION on a server without tenants, EFORBIDDEN for a caller with other credentials (a
// tenant's admin secret or JWT), EUNAUTHORIZED for none or a wrong platform secret.
// The secret is compared as a SHA-256 digest in constant time: neither its content
// nor its length leaks.
func (h *Handler) platformCheck(ctx context.Context, hdr http.Header) error {
	if h.cfg.TenantHost {
		return coffer.Errorf(coffer.EFORBIDDEN, "tenants are managed on the platform's hosts (the default tenant's), not on a tenant's")
	}
	if h.cfg.Tenants == nil {
		return coffer.Errorf(coffer.EPRECONDITION, "multi-tenancy is off (start coffer with --tenants and --platform-secret to manage tenants)")
	}
	if len(hdr.Values(HeaderPlatformSecret)) == 0 {
		if p := principal(ctx); p != nil && !p.Anonymous {
			return coffer.Errorf(coffer.EFORBIDDEN, "tenants are managed with the platform secret (header x-coffer-platform-secret), not a tenant's credentials")
		}
		return coffer.Errorf(coffer.EUNAUTHORIZED, "tenants are managed with the platform secret (header x-coffer-platform-secret)")
	}
	if !h.platformSecret(hdr) {
		return coffer.Errorf(coffer.EUNAUTHORIZED, "invalid platform secret")
	}
	return nil
}

// platformSecret reports whether hdr carries the platform secret, once.
func (h *Handler) platformSecret(hdr http.Header) bool {
	vals := hdr.Values(HeaderPlatformSecret)
	if len(vals) != 1 {
		return false
	}
	got := sha256.Sum256([]byte(vals[0]))
	return subtle.ConstantTimeCompare(got[:], h.platform[:]) == 1
}
