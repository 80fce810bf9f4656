package auth

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"log/slog"
	"net/http"
	"strings"

	"github.com/coffer/coffer"
)

// Config holds the authenticator settings.
type Config struct {
	AdminSecret string // "" disables the admin secret
	// AdminSecretHashes are more admin secrets, given by their SHA-256 digests (a
	// tenant's, which are stored only as digests); any of them, or AdminSecret, makes
	// a request admin.
	AdminSecretHashes [][32]byte
	UnauthorizedRole  string // role of requests without credentials
	// JWTSecret is Hasura's JSON JWT secret (see ParseJWTConfig); "" disables JWT
	// authentication.
	JWTSecret string
	// JWT is an already parsed JWT config, used instead of JWTSecret when set (a
	// tenant's, whose key is kept sealed in its settings).
	JWT *JWTConfig
	// JWKSTransport fetches a "jwk_url" key set; nil: http.DefaultTransport. A
	// tenant's goes through the webhook SSRF guard: the URL is the tenant's setting.
	JWKSTransport http.RoundTripper
	// JWTAdminRole makes a JWT whose role is "admin" an admin, with every permission,
	// as Hasura treats its admin role (and hasura-storage with it). Off: "admin" is
	// an ordinary role that needs rules.
	JWTAdminRole bool
	// Logger receives JWKS refresh failures; nil means slog.Default().
	Logger *slog.Logger
}

// DefaultConfig returns the defaults.
func DefaultConfig() Config { return Config{UnauthorizedRole: "public", JWTAdminRole: true} }

// Validate checks c, including the JWT secret.
func (c Config) Validate() error {
	if c.UnauthorizedRole == "" {
		return coffer.Errorf(coffer.EINVALID, "unauthorized role must not be empty")
	}
	if c.JWTSecret != "" {
		if _, err := ParseJWTConfig(c.JWTSecret); err != nil {
			return err
		}
	}
	return nil
}

// Authenticator maps a request's credentials to a principal. With a JWKS URL it
// owns a refresh goroutine: call Close when done.
type Authenticator struct {
	cfg       Config
	adminHash [32]byte
	jwt       *jwtVerifier // nil when JWT is disabled
	// anon is every anonymous request's principal: principals are read-only once
	// made (cached JWT principals are shared the same way).
	anon *coffer.Principal
}

// New returns an Authenticator. With a "jwk_url" JWT secret it fetches the key
// set once (waiting up to 10 s; a failure is logged and retried in the background,
// tokens are refused until a fetch succeeds) and starts the refresher that Close
// stops.
func New(cfg Config) (*Authenticator, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	a := &Authenticator{cfg: cfg, adminHash: sha256.Sum256([]byte(cfg.AdminSecret)), anon: coffer.AnonymousPrincipal(cfg.UnauthorizedRole)}
	jc := cfg.JWT
	if jc == nil && cfg.JWTSecret == "" {
		return a, nil
	}
	if jc == nil {
		var err error
		if jc, err = ParseJWTConfig(cfg.JWTSecret); err != nil {
			return nil, err
		}
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	jv, err := newJWTVerifier(jc, log, cfg.JWKSTransport)
	if err != nil {
		return nil, err
	}
	a.jwt, jv.adminRole = jv, cfg.JWTAdminRole
	return a, nil
}

// Close stops the JWKS refresher, if any. It is safe to call more than once.
func (a *Authenticator) Close() error {
	if a.jwt != nil {
		a.jwt.close()
	}
	return nil
}

// Request headers.
const (
	HeaderAdminSecret   = "X-Hasura-Admin-Secret"
	HeaderRole          = "X-Hasura-Role"
	HeaderAuthorization = "Authorization"
)

// Principal returns who r is:
//   - an admin secret header wins: a wrong one is EUNAUTHORIZED; with an
//     x-hasura-role header other than "admin" the admin acts as that role (not
//     Admin, session variables from the x-hasura-* request headers), as in Hasura;
//   - else, with JWT enabled, a Bearer token is verified (failures EUNAUTHORIZED;
//     an x-hasura-role header outside the token's allowed roles EFORBIDDEN);
//   - else the request is anonymous. With JWT disabled an Authorization header is
//     ignored, not refused, so clients that always send a token can still make
//     anonymous (public) reads.
func (a *Authenticator) Principal(r *http.Request) (*coffer.Principal, error) {
	return a.PrincipalOf(r.Context(), r.Header)
}

// PrincipalOf is Principal for a request with header h, made under ctx: for servers
// that keep no http.Request (the HTTP/1.1 fast path). h needs only the headers whose
// names begin with one of CredentialHeaders.
func (a *Authenticator) PrincipalOf(ctx context.Context, h http.Header) (*coffer.Principal, error) {
	if vals, ok := h[HeaderAdminSecret]; ok {
		if err := a.checkAdmin(vals); err != nil {
			return nil, err
		}
		return adminPrincipal(h)
	}
	if a.jwt != nil {
		token, ok, err := bearerToken(h)
		if err != nil || !ok {
			return a.anonymousOr(err)
		}
		role, err := roleHeader(h)
		if err != nil {
			return nil, err
		}
		return a.jwt.principal(ctx, token, role)
	}
	return a.anon, nil
}

// CredentialHeaders are the beginnings of the names of the request headers
// PrincipalOf reads (ASCII case-insensitive): Authorization and every X-Hasura-* one.
var CredentialHeaders = []string{HeaderAuthorization, "X-Hasura-"}

func (a *Authenticator) anonymousOr(err error) (*coffer.Principal, error) {
	if err != nil {
		return nil, err
	}
	return a.anon, nil
}

// checkAdmin compares the admin secret header with the configured secret.
func (a *Authenticator) checkAdmin(vals []string) error {
	if (a.cfg.AdminSecret == "" && len(a.cfg.AdminSecretHashes) == 0) || len(vals) != 1 {
		return coffer.Errorf(coffer.EUNAUTHORIZED, "invalid admin secret")
	}
	// Compare fixed-length digests in constant time, against every secret: leaks
	// neither content, nor length, nor which secret matched.
	got := sha256.Sum256([]byte(vals[0]))
	ok := a.cfg.AdminSecret != "" && subtle.ConstantTimeCompare(got[:], a.adminHash[:]) == 1
	for _, h := range a.cfg.AdminSecretHashes {
		ok = subtle.ConstantTimeCompare(got[:], h[:]) == 1 || ok
	}
	if !ok {
		return coffer.Errorf(coffer.EUNAUTHORIZED, "invalid admin secret")
	}
	return nil
}

// adminPrincipal is the principal of a request with a valid admin secret. The
// x-hasura-* request headers (but the secret) become session variables; an
// x-hasura-role other than "admin" drops admin rights for that role.
func adminPrincipal(h http.Header) (*coffer.Principal, error) {
	role, err := roleHeader(h)
	if err != nil {
		return nil, err
	}
	session := map[string]string{}
	for k, v := range h {
		lk := strings.ToLower(k)
		if strings.HasPrefix(lk, hasuraPrefix) && lk != "x-hasura-admin-secret" && len(v) > 0 {
			session[lk] = v[0]
		}
	}
	p := coffer.AdminPrincipal()
	if role != "" && role != p.Role {
		p = &coffer.Principal{Role: role}
	}
	session[claimRole] = p.Role
	p.Session, p.UserID = session, session[claimUserID]
	return p, nil
}

// roleHeader returns the x-hasura-role header, "" if absent. Several values are
// EINVALID: which one applies would be a guess.
func roleHeader(h http.Header) (string, error) {
	vals := h[HeaderRole]
	switch len(vals) {
	case 0:
		return "", nil
	case 1:
		return strings.TrimSpace(vals[0]), nil
	}
	return "", coffer.Errorf(coffer.EINVALID, "several %s headers", HeaderRole)
}

// bearerToken returns the token of an "Authorization: Bearer <token>" header;
// ok is false without the header. Any other form is EUNAUTHORIZED.
func bearerToken(h http.Header) (token string, ok bool, err error) {
	vals := h[HeaderAuthorization]
	switch {
	case len(vals) == 0:
		return "", false, nil
	case len(vals) > 1:
		return "", false, coffer.Errorf(coffer.EUNAUTHORIZED, "several Authorization headers")
	}
	scheme, rest, _ := strings.Cut(strings.TrimSpace(vals[0]), " ")
	if !strings.EqualFold(scheme, "Bearer") {
		return "", false, coffer.Errorf(coffer.EUNAUTHORIZED, `Authorization header must be "Bearer <token>"`)
	}
	if token = strings.TrimSpace(rest); token == "" {
		return "", false, coffer.Errorf(coffer.EUNAUTHORIZED, "missing bearer token")
	}
	return token, true, nil
}
