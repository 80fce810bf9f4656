package site

import (
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/coffer/coffer"
)

// validate checks a route; at is its path in the document ("routes[2]").
func (r *Route) validate(at string) error {
	pat, err := parsePattern(r.Path)
	if err != nil {
		return invalid(at+".path", "%s", err)
	}
	if r.StripPrefix != "" && (r.StripPrefix[0] != '/' || !strings.HasPrefix(pat.literal, r.StripPrefix)) {
		return invalid(at+".stripPrefix", "must start with \"/\" and be a prefix of %q", pat.literal)
	}
	if err := r.Target.validate(at + ".target"); err != nil {
		return err
	}
	if r.Index != "" && r.Index != "-" && (strings.Contains(r.Index, "/") || !validKey(r.Index)) {
		return invalid(at+".index", `must be a file name such as "index.html", or "-" for none`)
	}
	if err := validDocPath(at+".fallback", r.Fallback); err != nil {
		return err
	}
	if err := validDocPath(at+".notFound", r.NotFound); err != nil {
		return err
	}
	if err := validHeaders(at+".headers", r.Headers, responseHeaderRefused); err != nil {
		return err
	}
	if err := validCacheRules(at+".cacheControl", r.CacheControl); err != nil {
		return err
	}
	if err := validTags(at+".tags", r.Tags); err != nil {
		return err
	}
	return r.Edge.validate(at + ".edge")
}

// validate checks that exactly one target is set, and that one.
func (t *Target) validate(at string) error {
	n := 0
	for _, set := range []bool{t.Bucket != nil, t.HTTP != nil, t.S3 != nil, t.Redirect != nil} {
		if set {
			n++
		}
	}
	if n != 1 {
		return invalid(at, "set exactly one of bucket, http, s3 or redirect")
	}
	switch {
	case t.Bucket != nil:
		if err := coffer.ValidateBucketID(t.Bucket.ID); err != nil {
			return invalid(at+".bucket.id", "%s", coffer.ErrorMessage(err))
		}
		return validPrefix(at+".bucket.prefix", t.Bucket.Prefix)
	case t.HTTP != nil:
		return t.HTTP.validate(at + ".http")
	case t.S3 != nil:
		return t.S3.validate(at + ".s3")
	}
	return t.Redirect.validate(at + ".redirect")
}

// validate checks an HTTP origin.
func (o *HTTPOrigin) validate(at string) error {
	if err := validURL(at+".url", o.URL, true); err != nil {
		return err
	}
	if err := validHeaders(at+".headers", o.Headers, requestHeaderRefused); err != nil {
		return err
	}
	if err := validHeaderNames(at+".headersSet", o.HeadersSet); err != nil {
		return err
	}
	return validDuration(at+".timeout", o.Timeout, maxTimeout)
}

// validate checks an S3 origin.
func (o *S3Origin) validate(at string) error {
	if o.Endpoint != "" {
		if err := validURL(at+".endpoint", o.Endpoint, false); err != nil {
			return err
		}
		if u, _ := url.Parse(o.Endpoint); u.Path != "" && u.Path != "/" {
			return invalid(at+".endpoint", "must have no path")
		}
	}
	if !validS3Bucket(o.Bucket) {
		return invalid(at+".bucket", "must be an S3 bucket name: 3 to 63 characters of a-z, 0-9, '.' and '-'")
	}
	switch {
	case len(o.Region) > 64 || !printable(o.Region):
		return invalid(at+".region", "must be at most 64 printable characters")
	case len(o.AccessKeyID) > 128 || !printable(o.AccessKeyID):
		return invalid(at+".accessKeyId", "must be at most 128 printable characters")
	case len(o.SecretAccessKey) > maxSecretLen || !printable(o.SecretAccessKey):
		return invalid(at+".secretAccessKey", "must be at most %d printable characters", maxSecretLen)
	case o.AccessKeyID == "" && o.SecretAccessKey != "":
		return invalid(at+".accessKeyId", "a secretAccessKey needs its accessKeyId")
	}
	if err := validPrefix(at+".prefix", o.Prefix); err != nil {
		return err
	}
	return validDuration(at+".timeout", o.Timeout, maxTimeout)
}

// validS3Bucket reports whether b is a DNS-compatible S3 bucket name.
func validS3Bucket(b string) bool {
	if len(b) < 3 || len(b) > 63 || b[0] == '.' || b[0] == '-' || strings.Contains(b, "..") {
		return false
	}
	for i := 0; i < len(b); i++ {
		if c := b[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '-') {
			return false
		}
	}
	return true
}

// validate checks a redirect: a status of 301, 302, 307 or 308 (0: 301) and a
// target that is a local path or an absolute http(s) URL. A backslash is refused
// anywhere: browsers read it as "/" in http(s) URLs, so "/\evil.test" would be
// the scheme-relative "//evil.test" to them.
func (r *Redirect) validate(at string) error {
	switch r.Status {
	case 0, 301, 302, 307, 308:
	default:
		return invalid(at+".status", "must be 301, 302, 307 or 308")
	}
	to := r.To
	if len(to) > maxURLLen || !printable(to) {
		return invalid(at+".to", "must be at most %d bytes of printable ASCII", maxURLLen)
	}
	if strings.Contains(to, `\`) {
		return invalid(at+".to", `must not contain a backslash (browsers read it as "/")`)
	}
	if strings.HasPrefix(to, "/") && !strings.HasPrefix(to, "//") {
		return nil
	}
	if u, err := url.Parse(to); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return invalid(at+".to", `must be a path ("/new/:splat") or an absolute http(s) URL`)
	}
	return nil
}

// validURL checks an absolute http(s) URL with a host, no userinfo, query or
// fragment; base says it is an origin's base, whose path must end in "/" if any.
func validURL(at, raw string, base bool) error {
	if raw == "" || len(raw) > maxURLLen || !printable(raw) {
		return invalid(at, "must be an absolute http(s) URL of at most %d bytes", maxURLLen)
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Opaque != "":
		return invalid(at, "must be an absolute http(s) URL with a host")
	case u.User != nil:
		return invalid(at, "must not hold credentials (use headers)")
	case u.RawQuery != "" || u.Fragment != "" || strings.ContainsAny(raw, "?#"):
		return invalid(at, "must have no query or fragment")
	}
	if base && u.Path != "" && !strings.HasSuffix(u.Path, "/") {
		return invalid(at, `a base path must end in "/"`)
	}
	return nil
}

// validPrefix checks a key prefix: "" or a clean relative name ("site/",
// "www-"), never reaching outside with "..".
func validPrefix(at, p string) error {
	if p == "" {
		return nil
	}
	if len(p) > maxPrefixLen || !validKey(p+"x") {
		return invalid(at, `must be a clean relative key prefix such as "site/"`)
	}
	return nil
}

// validKey reports whether k is a clean file name as coffer.CleanName keeps it.
func validKey(k string) bool {
	c, err := coffer.CleanName(k)
	return err == nil && c == k
}

// validTags checks surrogate keys: at most maxTags of [A-Za-z0-9._-].
func validTags(at string, tags []string) error {
	if len(tags) > maxTags {
		return invalid(at, "at most %d tags", maxTags)
	}
	for i, t := range tags {
		if !validTag(t) {
			return invalid(fmt.Sprintf("%s[%d]", at, i), "must be 1 to %d characters of A-Z, a-z, 0-9, '.', '_' and '-'", maxTagLen)
		}
	}
	return nil
}

// validTag reports whether t is a surrogate key.
func validTag(t string) bool {
	if t == "" || len(t) > maxTagLen {
		return false
	}
	for i := 0; i < len(t); i++ {
		c := t[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// validate checks the edge policy's durations (at most 30 days).
func (p EdgePolicy) validate(at string) error {
	for _, d := range []struct {
		name string
		v    Duration
	}{{"ttl", p.TTL}, {"staleWhileRevalidate", p.StaleWhileRevalidate}, {"staleIfError", p.StaleIfError}} {
		if err := validDuration(at+"."+d.name, d.v, maxDuration); err != nil {
			return err
		}
	}
	if p.NegativeTTL != nil {
		return validDuration(at+".negativeTtl", *p.NegativeTTL, maxDuration)
	}
	return nil
}

// validDuration checks 0 <= d <= max.
func validDuration(at string, d Duration, max time.Duration) error {
	if d < 0 || d.D() > max {
		return invalid(at, "must be 0 to %s", max)
	}
	return nil
}
