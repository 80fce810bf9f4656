package auth

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"time"

	"github.com/MicahParks/jwkset"
	"github.com/MicahParks/keyfunc/v3"
	"github.com/coffer/coffer"
	"github.com/golang-jwt/jwt/v5"
	"golang.org/x/time/rate"
)

// MaxTokenSize is the largest bearer token accepted; longer ones are refused
// before any parsing.
const MaxTokenSize = 16 << 10

// JWKS fetching. The refresher runs every jwksRefresh; a token with an unknown
// kid triggers at most one extra fetch per jwksUnknownKID (other such tokens fail
// at once instead of queueing), so random kids cannot hammer the identity provider.
const (
	jwksRefresh     = 5 * time.Minute
	jwksUnknownKID  = time.Minute
	jwksHTTPTimeout = 10 * time.Second
	jwksMaxBody     = 1 << 20
)

// errUnknownKID: no JWKS key fits a token without kid (JWKS lookups by kid
// return jwkset.ErrKeyNotFound).
var errUnknownKID = errors.New("unknown key id")

// errKeyMismatch: the kid names a JWKS key that cannot verify the token's algorithm.
var errKeyMismatch = errors.New("key does not fit the signing algorithm")

// jwtVerifier checks bearer tokens against one JWTConfig.
type jwtVerifier struct {
	cfg    *JWTConfig
	parser *jwt.Parser
	keys   func(ctx context.Context) jwt.Keyfunc
	now    func() time.Time
	stop   context.CancelFunc // ends the JWKS refresher; nil for a static key
	cache  *tokenCache        // verified tokens (see tokencache.go)
	jwks   keyfunc.Keyfunc    // nil for a static key
	// adminRole: a token acting as role "admin" is an admin (Hasura's admin role).
	adminRole bool
	// transport fetches the JWKS (nil: http.DefaultTransport).
	transport http.RoundTripper
}

// newJWTVerifier builds a verifier; with a JWKS URL it fetches the set once
// (a failure is logged, not fatal: the refresher keeps trying) and starts the
// refresher, which runs until close.
func newJWTVerifier(cfg *JWTConfig, log *slog.Logger, transport http.RoundTripper) (*jwtVerifier, error) {
	v := &jwtVerifier{cfg: cfg, now: time.Now, cache: newTokenCache(tokenCacheEntries), transport: transport}
	opts := []jwt.ParserOption{
		jwt.WithValidMethods(cfg.methods),
		jwt.WithJSONNumber(),
		jwt.WithStrictDecoding(),
		jwt.WithIssuedAt(),
		jwt.WithLeeway(cfg.AllowedSkew),
		jwt.WithTimeFunc(func() time.Time { return v.now() }),
	}
	if len(cfg.Audience) > 0 {
		opts = append(opts, jwt.WithAudience(cfg.Audience...))
	}
	if cfg.Issuer != "" {
		opts = append(opts, jwt.WithIssuer(cfg.Issuer))
	}
	if cfg.RequireExp {
		opts = append(opts, jwt.WithExpirationRequired())
	}
	v.parser = jwt.NewParser(opts...)
	if cfg.JWKURL == "" {
		v.keys = func(context.Context) jwt.Keyfunc { return v.staticKey }
		return v, nil
	}
	if err := v.startJWKS(log); err != nil {
		return nil, err
	}
	return v, nil
}

// staticKey returns the configured key whatever the kid, as Hasura does. The
// parser has already refused every algorithm but the configured one.
func (v *jwtVerifier) staticKey(*jwt.Token) (any, error) { return v.cfg.key, nil }

// jwksTransport is the transport JWKS fetches go through.
func (v *jwtVerifier) jwksTransport() http.RoundTripper {
	if v.transport != nil {
		return v.transport
	}
	return http.DefaultTransport
}

// startJWKS starts keyfunc's JWKS client with this package's limits.
func (v *jwtVerifier) startJWKS(log *slog.Logger) error {
	ctx, cancel := context.WithCancel(context.Background())
	kf, err := keyfunc.NewDefaultOverrideCtx(ctx, []string{v.cfg.JWKURL}, keyfunc.Override{
		Client:            &http.Client{Timeout: jwksHTTPTimeout, Transport: capBody{v.jwksTransport()}},
		HTTPTimeout:       jwksHTTPTimeout,
		RefreshInterval:   jwksRefresh,
		RefreshUnknownKID: rate.NewLimiter(rate.Every(jwksUnknownKID), 1),
		RateLimitWaitMax:  jwksHTTPTimeout,
		RefreshErrorHandlerFunc: func(u string) func(context.Context, error) {
			return func(ctx context.Context, err error) {
				log.WarnContext(ctx, "JWKS refresh failed", "url", u, "error", err)
			}
		},
	})
	if err != nil {
		cancel()
		return coffer.Errorf(coffer.EINVALID, "jwt secret: \"jwk_url\": %v", err)
	}
	v.stop, v.jwks = cancel, kf
	v.keys = func(ctx context.Context) jwt.Keyfunc {
		inner := kf.KeyfuncCtx(ctx)
		return func(t *jwt.Token) (any, error) { return checkedKey(t, inner) }
	}
	return nil
}

// checkedKey looks a key up and refuses one whose type does not fit the token's
// algorithm (a JWKS may list keys of several kinds under any kid).
func checkedKey(t *jwt.Token, inner jwt.Keyfunc) (any, error) {
	key, err := inner(t)
	if err != nil {
		return nil, err
	}
	alg := t.Method.Alg()
	if set, ok := key.(jwt.VerificationKeySet); ok {
		var fit jwt.VerificationKeySet
		for _, k := range set.Keys {
			if keyMatchesAlg(alg, k) == nil {
				fit.Keys = append(fit.Keys, k)
			}
		}
		if len(fit.Keys) == 0 {
			return nil, errUnknownKID
		}
		return fit, nil
	}
	if keyMatchesAlg(alg, key) != nil {
		return nil, errKeyMismatch
	}
	return key, nil
}

func (v *jwtVerifier) close() {
	if v.stop != nil {
		v.stop()
	}
}

// principal verifies token and maps its claims to a principal; roleHeader is the
// x-hasura-role request header ("" if none). Token failures are EUNAUTHORIZED; a
// role outside the allowed roles is EFORBIDDEN.
func (v *jwtVerifier) principal(ctx context.Context, token, roleHeader string) (*coffer.Principal, error) {
	if len(token) > MaxTokenSize {
		return nil, tokenError("token is too large", nil)
	}
	key, now := tokenCacheKey(token, roleHeader), v.now()
	if e, ok := v.cache.get(key, now); ok && v.keyPresent(ctx, e.kid) {
		return e.p, nil
	}
	claims := jwt.MapClaims{}
	t, err := v.parser.ParseWithClaims(token, claims, v.keys(ctx))
	if err != nil {
		return nil, tokenError(v.reason(t, claims, err), err)
	}
	p, err := v.cfg.principal(claims, roleHeader)
	if err != nil {
		return nil, err
	}
	p.Admin = v.adminRole && p.Role == coffer.AdminRole
	e := cachedPrincipal{p: p, deadline: now.Add(tokenCacheTTL)}
	e.kid, _ = t.Header["kid"].(string)
	if exp, _ := claims.GetExpirationTime(); exp != nil && exp.Add(v.cfg.AllowedSkew).Before(e.deadline) {
		e.deadline = exp.Add(v.cfg.AllowedSkew)
	}
	if v.jwks == nil || e.kid != "" {
		v.cache.put(key, e, now)
	}
	return p, nil
}

// keyPresent reports whether a cached token's key is still usable: always for a
// static key; with a JWKS, when the set still lists kid.
func (v *jwtVerifier) keyPresent(ctx context.Context, kid string) bool {
	if v.jwks == nil {
		return true
	}
	_, err := v.jwks.Storage().KeyRead(ctx, kid)
	return err == nil
}

func tokenError(reason string, cause error) error {
	return &coffer.Error{Code: coffer.EUNAUTHORIZED, Message: "invalid token: " + reason, Err: cause}
}

// reason turns a jwt error into a short client-facing reason. Order matters: a
// claims error is only reached once the signature is good.
func (v *jwtVerifier) reason(t *jwt.Token, claims jwt.MapClaims, err error) string {
	switch {
	case errors.Is(err, errUnknownKID), errors.Is(err, jwkset.ErrKeyNotFound):
		return "unknown key id"
	case errors.Is(err, errKeyMismatch):
		return "the key id names a key of another type"
	case errors.Is(err, jwt.ErrTokenMalformed):
		return "token is malformed"
	case errors.Is(err, jwt.ErrTokenSignatureInvalid):
		if t != nil && t.Method != nil && !slices.Contains(v.cfg.methods, t.Method.Alg()) {
			return "signing algorithm is not allowed"
		}
		return "signature is invalid"
	case errors.Is(err, jwt.ErrTokenUnverifiable):
		if t != nil && t.Method == nil {
			return "signing algorithm is not supported"
		}
		return "token cannot be verified"
	case errors.Is(err, jwt.ErrTokenExpired):
		return "token is expired"
	case errors.Is(err, jwt.ErrTokenNotValidYet):
		return "token is not valid yet"
	case errors.Is(err, jwt.ErrTokenUsedBeforeIssued):
		return "token is used before it was issued"
	case errors.Is(err, jwt.ErrTokenRequiredClaimMissing):
		return "missing " + v.missingClaim(claims) + " claim"
	case errors.Is(err, jwt.ErrTokenInvalidAudience):
		return "audience mismatch"
	case errors.Is(err, jwt.ErrTokenInvalidIssuer):
		return "issuer mismatch"
	case errors.Is(err, jwt.ErrInvalidType):
		return "a registered claim (exp, nbf, iat, aud or iss) has the wrong type"
	}
	return "bad registered claims (exp, nbf, iat, aud or iss)"
}

// missingClaim names the first required registered claim absent from claims.
func (v *jwtVerifier) missingClaim(claims jwt.MapClaims) string {
	has := func(name string) bool { _, ok := claims[name]; return ok }
	switch {
	case v.cfg.RequireExp && !has("exp"):
		return "exp"
	case len(v.cfg.Audience) > 0 && !has("aud"):
		return "aud"
	case v.cfg.Issuer != "" && !has("iss"):
		return "iss"
	}
	return "required"
}

// capBody caps JWKS response bodies: the set comes from a trusted URL, but a
// misconfigured one must not make us read without end.
type capBody struct{ rt http.RoundTripper }

func (c capBody) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := c.rt.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.LimitReader(resp.Body, jwksMaxBody), resp.Body}
	return resp, nil
}
