// Package site serves a tenant's sites: the Site document (Parse, Validate, the
// sealing of its secrets), its compiled form (Compile: route matchers, keys,
// header and cache rules), request path safety, content negotiation and
// compression, and the Handler answering a request over the Edge (the
// pull-through cache of package edge) and Buckets (the tenant's files) interfaces.
// The app resolves the host to a site, compiles it once per version and calls
// Handler.Serve with a Request.
//
// # Paths and keys
//
// A request path is checked once, up front (RequestPath, CleanPath): NUL and other
// control characters, backslash, "." and ".." segments (raw or percent-encoded),
// an encoded slash (%2F), a percent-encoded dot, slash, backslash or NUL left
// after decoding, invalid UTF-8 and paths over 1,024 bytes are 400; runs of "/"
// are merged. Keys are made only from the clean path: the target's prefix, then
// the path without the route's StripPrefix and its leading "/", the route's index
// document appended to a directory. A bucket key must also be one
// coffer.CleanName keeps as it is (no invisible or bidirectional characters, NFC)
// before Buckets.Open sees it.
//
// # Patterns
//
// A route path is "/about" (exactly), "/assets/*" (that prefix, any depth; not
// "/assets" itself), "/*" (everything), or a glob: "*" within a segment, "**"
// across segments, and a trailing "/*" any depth. A rule's match without "/"
// matches the last segment ("*.html"). Globs run as an NFA over a bitset: no
// backtracking, no allocation. A redirect's ":splat" is what follows the
// pattern's literal part (up to its first "*").
//
// # Decisions where the issue was silent
//
//   - Missing documents: a route's Fallback and NotFound are fetched from the same
//     route's target (the path mapped to a key as requests are); the site's
//     NotFound is routed like a request (first matching route that is not a
//     redirect). Error documents carry Cache-Control: no-cache.
//   - Cache-Control: the route's first matching rule (on the served document's
//     path, so "*.html" covers "/"), else the object's own (the upstream's, or what
//     the bucket source sets), else none.
//   - Route and rule headers may not set what the server owns: framing,
//     Content-Encoding, ranges, validators, Date, Age, Cache-Control (use
//     cacheControl), Surrogate-Key (use tags), X-Cache, Location and Set-Cookie (a
//     cached static answer must not carry one). Content-Type and Vary may be set;
//     Vary is added to. Nor the proxy-control headers a server or CDN in front
//     acts on (X-Accel-*, X-Sendfile, X-LiteSpeed-*, CDN-Cache-Control,
//     Surrogate-Control...): the operator's front is not a tenant's to steer.
//   - User content: a bucket target whose bucket some role of the tenant's rules
//     may upload or replace files in (access.RuleSet.Writable) serves files whose
//     type is not passive with /v1's sandbox (coffer.SandboxCSP, added to any
//     policy a route sets), and uses a precompressed sibling only when the same
//     user uploaded it and the document (uploaded_by_user_id, not empty: an
//     upload without a preset could be anyone's); BucketTarget.Trusted turns both
//     off. HTTP origins' siblings are fetched only with HTTPOrigin.Precompressed
//     (an SPA answers 200 for any path); S3 origins' always.
//   - Redirects: a target with a backslash is refused ("/\host" is "//host" to a
//     browser), as are "//host", control characters and spaces.
//   - An HTTP origin's headers are write-only like the other secrets: answers name
//     them in HeadersSet; an update keeps the stored value of each name it lists
//     there for the same URL.
//   - Compression: only the best acceptable coding's sibling is looked up (one
//     lookup, not three), then a derived copy of that coding is made. Identity
//     that the client does not name is the last choice; named, it wins only with a
//     higher q. A refused identity still gets identity (the content, not 406).
//     Levels: brotli 9, zstd best, gzip 9 (made once, served many times; brotli 11
//     took 20x brotli 9's time for 9% less on a 283 KiB bundle).
//   - Errors: EINVALID 400, a timeout 504, any other failure of an upstream (HTTP
//     or S3) 502, and for buckets EUNAVAILABLE 502, EFORBIDDEN 403, ETOOMANY 429,
//     anything else 500 with the request id, logged.
//   - X-Cache of a compressed answer is the identity object's status (a bucket
//     answer stays BYPASS).
package site
