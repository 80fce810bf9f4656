package site

import (
	"fmt"
	"net/http"
	"sort"
	"strings"

	"github.com/coffer/coffer"
)

// responseHeaderOwned are the response headers a route or header rule may not
// set: the server writes them from the content and the request (framing,
// encoding, ranges, validators, caching: Cache-Control comes from cacheControl
// rules and Surrogate-Key from tags), and Set-Cookie, which a cached static
// answer must never carry. Content-Type and Vary may be set (a Vary is added to,
// never replaced).
var responseHeaderOwned = map[string]bool{
	"Content-Length": true, "Transfer-Encoding": true, "Connection": true, "Keep-Alive": true,
	"Upgrade": true, "Trailer": true, "Te": true, "Content-Encoding": true, "Content-Range": true,
	"Accept-Ranges": true, "Etag": true, "Last-Modified": true, "Date": true, "Age": true,
	"Cache-Control": true, "Surrogate-Key": true, "X-Cache": true, "Location": true,
	"Set-Cookie": true, "Proxy-Authenticate": true,
}

// requestHeaderOwned are the headers an origin's Headers may not send: the edge
// writes framing, conditionals and ranges itself.
var requestHeaderOwned = map[string]bool{
	"Host": true, "Content-Length": true, "Transfer-Encoding": true, "Connection": true,
	"Keep-Alive": true, "Upgrade": true, "Trailer": true, "Te": true, "Range": true, "If-Range": true,
	"If-None-Match": true, "If-Modified-Since": true, "If-Match": true, "If-Unmodified-Since": true,
	"Accept-Encoding": true, "Expect": true, "Proxy-Authorization": true,
}

// proxyControlPrefixes and proxyControlSuffixes (lower case) name the headers a
// server or CDN in front of coffer acts on rather than passes to the client:
// internal redirects and file serving (nginx's X-Accel-Redirect and the rest of
// X-Accel-*, X-Sendfile, lighttpd's X-Lighttpd-Send-File, LiteSpeed's X-LiteSpeed-*,
// Perlbal's X-Reproxy-URL) and the caching of the proxy or CDN (CDN-Cache-Control
// and its targeted forms such as Cloudflare-CDN-Cache-Control (RFC 9213),
// Surrogate-Control, Akamai's Edge-Control). The operator's front owns them, not a
// tenant's site.
var (
	proxyControlPrefixes = [...]string{"x-accel-", "x-sendfile", "x-lighttpd-send-file", "x-litespeed-", "x-reproxy-url"}
	proxyControlSuffixes = [...]string{"cdn-cache-control", "surrogate-control", "edge-control"}
)

// proxyControl reports whether the header named name is a proxy-control header.
func proxyControl(name string) bool {
	n := strings.ToLower(name)
	for _, p := range proxyControlPrefixes {
		if strings.HasPrefix(n, p) {
			return true
		}
	}
	for _, sfx := range proxyControlSuffixes {
		if n == sfx || strings.HasSuffix(n, "-"+sfx) {
			return true
		}
	}
	return false
}

// responseHeaderRefused says why a route or header rule may not set the response
// header of canonical name ("" if it may).
func responseHeaderRefused(name string) string {
	switch {
	case responseHeaderOwned[name]:
		return "is set by the server"
	case proxyControl(name):
		return "is a proxy-control header (a server or CDN in front would act on it)"
	}
	return ""
}

// requestHeaderRefused says why an origin's Headers may not send the header of
// canonical name ("" if they may).
func requestHeaderRefused(name string) string {
	if requestHeaderOwned[name] {
		return "is set by the server"
	}
	return ""
}

// validHeaderNames checks the header names of an origin's HeadersSet: at most
// maxHeaders tokens an origin may send.
func validHeaderNames(at string, names []string) error {
	if len(names) > maxHeaders {
		return invalid(at, "at most %d headers", maxHeaders)
	}
	for i, k := range names {
		if !validToken(k) || requestHeaderRefused(http.CanonicalHeaderKey(k)) != "" {
			return invalid(fmt.Sprintf("%s[%d]", at, i), "%q is not a header the origin may be sent", k)
		}
	}
	return nil
}

// validHeaders checks header names (tokens, none refused says why) and values (no
// CR, LF, NUL or other control characters but tab).
func validHeaders(at string, h map[string]string, refused func(string) string) error {
	if len(h) > maxHeaders {
		return invalid(at, "at most %d headers", maxHeaders)
	}
	names := make([]string, 0, len(h))
	for k := range h {
		names = append(names, k)
	}
	sort.Strings(names) // the same document always names the same field
	for _, k := range names {
		if !validToken(k) {
			return invalid(at, "%q is not a header name", k)
		}
		if why := refused(http.CanonicalHeaderKey(k)); why != "" {
			return invalid(at+"."+k, "%s", why)
		}
		if v := h[k]; len(v) > maxValueLen || !validValue(v) {
			return invalid(at+"."+k, "a value is at most %d bytes without control characters", maxValueLen)
		}
	}
	return nil
}

// validToken reports whether s is an RFC 9110 token.
func validToken(s string) bool {
	if s == "" || len(s) > 256 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f {
			return false
		}
		switch c {
		case '"', '(', ')', ',', '/', ':', ';', '<', '=', '>', '?', '@', '[', '\\', ']', '{', '}':
			return false
		}
	}
	return true
}

// validValue reports whether v is a header value: no control characters but tab.
func validValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < ' ' && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}

// validHeaderRules checks a site's header rules.
func validHeaderRules(at string, rules []HeaderRule) error {
	if len(rules) > maxHeaderRules {
		return invalid(at, "at most %d rules", maxHeaderRules)
	}
	for i, r := range rules {
		ra := fmt.Sprintf("%s[%d]", at, i)
		if _, err := parseMatch(r.Match); err != nil {
			return invalid(ra+".match", "%s", err)
		}
		if len(r.Set) == 0 {
			return invalid(ra+".set", "names no header")
		}
		if err := validHeaders(ra+".set", r.Set, responseHeaderRefused); err != nil {
			return err
		}
	}
	return nil
}

// validCacheRules checks a route's Cache-Control rules: patterns, and values as a
// bucket's cacheControl is checked (directives only, printable ASCII, <= 256).
func validCacheRules(at string, rules []CacheRule) error {
	if len(rules) > maxCacheRules {
		return invalid(at, "at most %d rules", maxCacheRules)
	}
	for i, r := range rules {
		ra := fmt.Sprintf("%s[%d]", at, i)
		if _, err := parseMatch(r.Match); err != nil {
			return invalid(ra+".match", "%s", err)
		}
		b := coffer.NewBucket("x")
		b.CacheControl = r.Value
		if err := b.Validate(); err != nil || r.Value == "" {
			return invalid(ra+".value", "not a Cache-Control value")
		}
	}
	return nil
}
