package site

import "time"

// Document is one tenant's site as its admin writes it: the host names it answers
// and its routes, in order. A stored site (coffer.Site) holds it as JSON beside its
// tenant and times, as a stored tenant (coffer.Tenant) holds its tenant.Settings.
// Its JSON form (these field names) is what the server stores and what `coffer
// admin sites create --file` reads. The management API's message,
// coffer.admin.v1.Site, uses the same names (one document format for people), but
// rpcapi converts between the two field by field.
type Document struct {
	// ID names the site within its tenant: [a-z0-9-], 1..63 characters.
	ID string `json:"id"`
	// Hosts are the host names the site answers (normalized as tenant.NormalizeHost:
	// lower case, no port). A host belongs to one site of one tenant only, and not
	// to a tenant's API hosts.
	Hosts []string `json:"hosts"`
	// Routes are tried in order; the first whose Path matches the request's path
	// serves it. A request no route matches is 404 (NotFound's document if set).
	Routes []Route `json:"routes"`
	// NotFound is the path of the site's custom 404 document ("/404.html"),
	// served with status 404 when nothing else answers; "" for a plain 404.
	NotFound string `json:"notFound,omitempty"`
	// Headers are extra response headers by path pattern, applied to every answer
	// of the site whose path matches (after the route's own).
	Headers []HeaderRule `json:"headers,omitempty"`
	// PurgeWebhooks are told about every purge of this site (a CDN in front).
	PurgeWebhooks []PurgeWebhook `json:"purgeWebhooks,omitempty"`
	// Audit turns the audit log off for this site when false (default on).
	Audit *bool `json:"audit,omitempty"`
	// Created and Updated are set by the store.
	CreatedAt time.Time `json:"createdAt,omitzero"`
	UpdatedAt time.Time `json:"updatedAt,omitzero"`
}

// Route maps request paths to a target.
type Route struct {
	// Path is the pattern of request paths the route serves:
	//   "/about"        exactly that path;
	//   "/assets/*"     that prefix and anything below it (any depth);
	//   "/*"            every path;
	//   "/a/*.js"       "*" elsewhere matches within one path segment, "**" any depth.
	Path string `json:"path"`
	// StripPrefix is removed from the request path before the target key is made
	// (must be a prefix of every path Path matches): "/media" maps "/media/a.png"
	// to key "a.png".
	StripPrefix string `json:"stripPrefix,omitempty"`
	// Target is where the route's content comes from.
	Target Target `json:"target"`
	// Index is the document served for a path ending in "/" (default
	// "index.html"; "-" for none).
	Index string `json:"index,omitempty"`
	// Fallback is the SPA fallback document ("/index.html"): served with status
	// 200 for a GET or HEAD of a missing path that looks like a page (no file
	// extension in its last segment, or Accept names text/html).
	Fallback string `json:"fallback,omitempty"`
	// NotFound is the route's custom 404 document (overrides the site's).
	NotFound string `json:"notFound,omitempty"`
	// Headers are set on every answer of this route.
	Headers map[string]string `json:"headers,omitempty"`
	// CacheControl sets the Cache-Control header by pattern; the first match wins.
	// A pattern without "/" matches the last path segment ("*.html"), one with "/"
	// the whole path ("/assets/**").
	CacheControl []CacheRule `json:"cacheControl,omitempty"`
	// Tags are surrogate keys given to everything this route serves (purge by tag,
	// and the Surrogate-Key response header), in addition to tags from the object
	// (an upstream's Surrogate-Key header; a bucket file's metadata "tags").
	Tags []string `json:"tags,omitempty"`
	// Compress turns compression off for this route when false (default on).
	Compress *bool `json:"compress,omitempty"`
	// Edge is the pull-through cache policy for upstream targets.
	Edge EdgePolicy `json:"edge,omitzero"`
}

// Target is where a route's content comes from: exactly one of Bucket, HTTP, S3
// or Redirect is set.
type Target struct {
	// Bucket is a coffer bucket of the site's tenant: the key is the file's name.
	Bucket *BucketTarget `json:"bucket,omitempty"`
	// HTTP is an HTTP(S) origin, fetched through the edge cache.
	HTTP *HTTPOrigin `json:"http,omitempty"`
	// S3 is an S3 bucket with its own credentials, fetched through the edge cache.
	S3 *S3Origin `json:"s3,omitempty"`
	// Redirect answers every matching path with a redirect.
	Redirect *Redirect `json:"redirect,omitempty"`
}

// BucketTarget serves files of a coffer bucket by name: key = Prefix + path.
//
// When the tenant's rules let a role other than the admin upload or replace files
// in the bucket (access.RuleSet.Writable), any file may be a user's, so unless
// Trusted: a file whose type is not passive (HTML, SVG, XML, JavaScript, ...:
// coffer.PassiveType) is served with coffer.SandboxCSP, as /v1 serves it, and a
// precompressed sibling ("p.html.br") answers for a file only when the same user
// uploaded both (the same uploaded_by_user_id, not empty); otherwise the compressed
// copy is made from the file itself.
type BucketTarget struct {
	ID     string `json:"id"`
	Prefix string `json:"prefix,omitempty"`
	// Trusted says every writer of the bucket publishes the site: its files are
	// served as they are (active content unsandboxed, any precompressed sibling).
	Trusted bool `json:"trusted,omitempty"`
}

// HTTPOrigin is an upstream web server: the key is appended to URL.
type HTTPOrigin struct {
	// URL is the base, "http(s)://host[:port][/base/]".
	URL string `json:"url"`
	// Headers are sent with every upstream request (e.g. an auth token). They are
	// write-only: answers carry their names in HeadersSet, never their values.
	Headers map[string]string `json:"headers,omitempty"`
	// Timeout bounds an upstream request until its headers arrive (default 10s);
	// a body that stalls longer than it between reads is cut off.
	Timeout Duration `json:"timeout,omitempty"`
	// HeadersSet names the headers that are set, in answers. In an update, the
	// headers it names that Headers does not set keep their stored values (from
	// the stored site's origin of the same URL; a name with none there is refused).
	// A header neither set nor named is dropped.
	HeadersSet []string `json:"headersSet,omitempty"`
	// Precompressed says the origin holds precompressed siblings ("p.html.br",
	// ".zst", ".gz") and answers 404 for a missing one: they are fetched then. By
	// default they are not (an origin answering 200 for any path, an SPA's
	// fallback, would have that answer served as the compressed page): compressed
	// copies are made from the object itself.
	Precompressed bool `json:"precompressed,omitempty"`
}

// S3Origin is an S3 bucket with its own credentials: key = Prefix + path.
type S3Origin struct {
	Endpoint        string   `json:"endpoint,omitempty"` // http(s)://host[:port]; "" = AWS
	Region          string   `json:"region,omitempty"`
	Bucket          string   `json:"bucket"`
	Prefix          string   `json:"prefix,omitempty"`
	AccessKeyID     string   `json:"accessKeyId,omitempty"`
	SecretAccessKey string   `json:"secretAccessKey,omitempty"` // sealed once stored; never answered
	PathStyle       bool     `json:"pathStyle,omitempty"`
	Timeout         Duration `json:"timeout,omitempty"`
	// SecretAccessKeySet is set in answers when there is a secret key; ignored on input.
	SecretAccessKeySet bool `json:"secretAccessKeySet,omitempty"`
}

// Redirect answers with Status (301, 302, 307 or 308; default 301) and Location
// To, in which ":splat" is replaced by what the route's trailing "*" matched and
// the request's query string is kept.
type Redirect struct {
	To     string `json:"to"`
	Status int    `json:"status,omitempty"`
}

// HeaderRule sets headers on answers whose path matches Match (a pattern as in
// CacheRule).
type HeaderRule struct {
	Match string            `json:"match"`
	Set   map[string]string `json:"set"`
}

// CacheRule sets Cache-Control to Value on paths matching Match.
type CacheRule struct {
	Match string `json:"match"`
	Value string `json:"value"`
}

// EdgePolicy is how long upstream objects are kept. The upstream's own
// Cache-Control (s-maxage, max-age, no-store, private, stale-while-revalidate,
// stale-if-error) wins over these defaults when present.
type EdgePolicy struct {
	// TTL is how long an object without upstream freshness is fresh (default 60s).
	TTL Duration `json:"ttl,omitempty"`
	// StaleWhileRevalidate: a stale object is served at once while it is
	// revalidated in the background, for this long after it went stale (default 60s).
	StaleWhileRevalidate Duration `json:"staleWhileRevalidate,omitempty"`
	// StaleIfError: a stale object is served when the upstream fails or is down,
	// for this long after it went stale (default 24h).
	StaleIfError Duration `json:"staleIfError,omitempty"`
	// NegativeTTL: an upstream 404 is remembered this long (default 10s; "0s" off).
	NegativeTTL *Duration `json:"negativeTtl,omitempty"`
}

// PurgeWebhook is an outbound purge notification: every purge of the site is
// POSTed to URL as JSON {"site","tenant","paths","prefixes","tags","hosts"},
// signed as coffer's webhooks are, through the webhook SSRF guard.
type PurgeWebhook struct {
	URL    string `json:"url"`
	Secret string `json:"secret,omitempty"` // sealed once stored; never answered
	// SecretSet is set in answers when there is a secret; ignored on input.
	SecretSet bool `json:"secretSet,omitempty"`
}
