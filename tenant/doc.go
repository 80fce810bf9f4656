// Package tenant is what multi-tenancy needs before a request reaches a face: which
// tenant a request is for (Resolver: by Host, by X-Forwarded-Host from a trusted
// proxy, or by a /t/{tenant}/ path prefix), the tenant's settings document
// (Settings: its own admin secrets, JWT config, presign key, storage target and
// limits, with secrets hashed or sealed by a server key), and the limits that keep
// one tenant from slowing the others down (RateLimiter, Bandwidth).
//
// Why a package of its own: resolution runs on every request before anything else,
// on the HTTP/1.1 fast path too, so it must not allocate on a hit and must refuse
// hostile Host values (Unicode twins of a punycode name, CRLF, IPv6 zones, userinfo)
// the same way everywhere; and the settings document is the one place tenant
// secrets live, so their hashing, sealing and redaction are defined once here, not
// in each face that shows or uses them.
//
// Decisions a caller should know: X-Forwarded-Host counts only from a trusted peer,
// and then its right-most value (the one that proxy added); a host bound to a
// tenant wins over a /t/{tenant}/ path, so no tenant's files are ever served from
// another tenant's origin; an unknown host or tenant is a 404 that names nothing.
//
// Everything here is immutable once built (Resolver) or safe for concurrent use
// without a global lock (the limiters: atomic GCRA cells, sharded user tables). When
// tenants change, the caller builds a new Resolver and swaps an atomic pointer.
// Nothing here reads the clock by itself where a test needs to choose the time: the
// limiters take now as an argument or an injected Clock.
package tenant
