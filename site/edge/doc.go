// Package edge is the sites' pull-through disk cache (site.Edge) and its
// upstream origins: HTTP servers (HTTPOrigin) and S3 buckets (S3Origin).
//
// # Keys
//
// An upstream object is keyed by (Scope, Origin.ID(), Key): two tenants' sites
// over the same origin keep separate entries, so one's purge never touches the
// other's, and a changed origin (URL, credentials) never serves the old one's
// objects. Path and tags are kept with the entry for purges. A derived copy is
// keyed by (Scope, Path, Variant, SourceETag).
//
// # Disk and eviction
//
// MaxBytes bounds the body bytes on disk, fills in progress included: a fill
// reserves its Content-Length before writing (or 1 MiB at a time when the
// length is unknown), evicting committed entries to make room; if fills in
// progress hold the space the object is streamed through (BYPASS) instead.
// Sidecar metadata files (a few hundred bytes each) are not counted.
//
// Eviction is SIEVE (Zhang et al., NSDI '24) rather than LRU. A hit only sets
// the entry's visited bit (an atomic store under the read lock), where LRU must
// move the entry to the list head under a write lock: hits, the hot path, never
// contend. The eviction hand sweeps from the oldest entry, sparing (and
// clearing) visited ones, so an object requested once and never again - a
// crawler's scan, a one-off large download - is evicted on the hand's first
// pass, ahead of the popular set, which plain LRU would push out instead. On
// web-cache traces SIEVE's miss ratio matches or beats LRU's and ARC's; S3-FIFO
// resists scans slightly better but needs a ghost queue and two lists for a
// small gain here.
//
// # Coalescing and streaming
//
// Every miss for a key while a fetch for it runs joins that fetch (a flight):
// one upstream request however many clients ask. The flight runs under the
// cache's context, not a client's, so the fill completes (and is cached) when
// the client that started it leaves. Its body is written to a temp file while
// every client reads it as it grows (Object.Content blocks for bytes not yet
// arrived); a complete, verified fill is renamed into the data directory and
// its sidecar written, then it is indexed. A committed entry is served as an
// *os.File, so io.Copy and http.ServeContent send it with sendfile.
//
// A range request on a miss joins (or starts) the fill of the whole object and
// is served from it once its bytes arrive (the reader seeks when the size is
// known): one upstream request fills the cache for every later range, and the
// range's client waits only for the bytes before its range's end, not the
// whole object.
//
// # Integrity
//
// A fill whose body ends before its Content-Length, runs past it, fails, or
// stalls longer than the origin's timeout is discarded and every reader of it
// gets an error, never io.EOF (the serving layer then cuts the connection, so
// no client takes a truncated body for a whole one). An object whose
// Content-Length passes MaxObjectSize is streamed through uncached (BYPASS).
// One without a Content-Length that grows past MaxObjectSize fails its fill: its
// clients are cut at that point (to keep the disk bound and never serve a
// partial object, the edge keeps no copy to continue from); later requests
// fetch it again. no-store and private answers are streamed through (BYPASS)
// and drop any older entry.
//
// # Freshness
//
// The upstream's Cache-Control decides (s-maxage over max-age; no-store and
// private are not stored; no-cache revalidates on every use; must-revalidate
// serves nothing stale; stale-while-revalidate and stale-if-error windows),
// otherwise the route's EdgePolicy (TTL 60s, stale-while-revalidate 60s,
// stale-if-error 24h, negative TTL 10s). A stale entry inside its
// stale-while-revalidate window is served at once (STALE) while one background
// revalidation runs; past it, the client waits for a conditional fetch
// (If-None-Match / If-Modified-Since): 304 renews it (REVALIDATED), 200
// replaces it (MISS, streamed), 404 drops it. When the origin fails (error,
// 5xx, 3xx, timeout, open breaker) a stale entry inside its stale-if-error
// window is served (STALE); otherwise the answer is EUNAVAILABLE. A 404 is
// remembered for the negative TTL (ENOTFOUND without asking again).
//
// # Circuit breaker
//
// Each origin ID has a breaker: 5 consecutive failures (fetch errors, non-200/
// 304/404 answers, broken bodies) open it for a cooldown (1s, doubling after
// each failed probe, capped at 1m); then one probe goes through (half-open).
// While it is open fetches fail at once, and stale copies are served.
//
// # Restart
//
// New rebuilds the index from the data directory: each body with a sidecar
// whose recorded size matches the file is kept; partial fills, orphans and
// mismatches are deleted. A deploy restart behind a CDN thus keeps its cache.
package edge
