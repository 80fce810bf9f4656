package auth

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"

	"github.com/coffer/coffer"
)

// Config holds the authenticator settings.
type Config struct {
	AdminSecret      string // "" disables the admin secret
	UnauthorizedRole string // role of requests without credentials
}

// DefaultConfig returns the defaults.
func DefaultConfig() Config { return Config{UnauthorizedRole: "public"} }

// Validate checks c.
func (c Config) Validate() error {
	if c.UnauthorizedRole == "" {
		return coffer.Errorf(coffer.EINVALID, "unauthorized role must not be empty")
	}
	return nil
}

// Authenticator maps a request's credentials to a principal.
type Authenticator struct {
	cfg       Config
	adminHash [32]byte
}

// New returns an Authenticator.
func New(cfg Config) (*Authenticator, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Authenticator{cfg: cfg, adminHash: sha256.Sum256([]byte(cfg.AdminSecret))}, nil
}

// HeaderAdminSecret carries the admin secret.
const HeaderAdminSecret = "X-Hasura-Admin-Secret"

// Principal returns who r is. A wrong admin secret is EUNAUTHORIZED; no credentials
// give the anonymous role. Bearer tokens are not verified yet (JWT support comes with
// the rules engine): they are ignored and the request is anonymous.
func (a *Authenticator) Principal(r *http.Request) (*coffer.Principal, error) {
	if vals, ok := r.Header[http.CanonicalHeaderKey(HeaderAdminSecret)]; ok {
		if a.cfg.AdminSecret == "" || len(vals) != 1 {
			return nil, coffer.Errorf(coffer.EUNAUTHORIZED, "invalid admin secret")
		}
		// Compare fixed-length digests in constant time: leaks neither content nor length.
		got := sha256.Sum256([]byte(vals[0]))
		if subtle.ConstantTimeCompare(got[:], a.adminHash[:]) != 1 {
			return nil, coffer.Errorf(coffer.EUNAUTHORIZED, "invalid admin secret")
		}
		return coffer.AdminPrincipal(), nil
	}
	return coffer.AnonymousPrincipal(a.cfg.UnauthorizedRole), nil
}
