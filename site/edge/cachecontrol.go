package edge

import (
	"strconv"
	"strings"
	"time"

	"github.com/coffer/coffer/site"
)

// cacheControl is what the edge reads of an upstream's Cache-Control header.
// A directive's absence is -1 for the durations.
type cacheControl struct {
	maxAge, sMaxAge      time.Duration
	swr, sie             time.Duration
	noStore, private     bool
	noCache, mustReval   bool
	hasMaxAge, hasSMaxAg bool
}

// maxDirectiveSeconds caps a delta-seconds value (RFC 9111 §1.2.2 says to treat
// anything larger as 2^31): ~68 years, far inside time.Duration.
const maxDirectiveSeconds = 1<<31 - 1

// parseCacheControl reads a Cache-Control header value. It never fails:
// directives it does not know or cannot read are ignored, as RFC 9111 asks, and
// a malformed delta-seconds counts as absent.
func parseCacheControl(v string) cacheControl {
	cc := cacheControl{maxAge: -1, sMaxAge: -1, swr: -1, sie: -1}
	for len(v) > 0 {
		var part string
		part, v = nextDirective(v)
		name, arg, _ := strings.Cut(part, "=")
		name = strings.ToLower(strings.TrimSpace(name))
		arg = strings.Trim(strings.TrimSpace(arg), `"`)
		cc.apply(name, arg)
	}
	return cc
}

// nextDirective splits off the first comma-separated directive, honouring
// quoted strings (no-cache="Set-Cookie, Foo" is one directive).
func nextDirective(v string) (part, rest string) {
	quoted := false
	for i := 0; i < len(v); i++ {
		switch v[i] {
		case '"':
			quoted = !quoted
		case '\\':
			if quoted {
				i++
			}
		case ',':
			if !quoted {
				return v[:i], v[i+1:]
			}
		}
	}
	return v, ""
}

func (cc *cacheControl) apply(name, arg string) {
	switch name {
	case "no-store":
		cc.noStore = true
	case "private":
		cc.private = true
	case "no-cache":
		// no-cache="field" only restricts fields; the edge treats any form as
		// "revalidate every time", the safe reading.
		cc.noCache = true
	case "must-revalidate", "proxy-revalidate":
		cc.mustReval = true
	case "max-age":
		cc.maxAge, cc.hasMaxAge = seconds(arg)
	case "s-maxage":
		cc.sMaxAge, cc.hasSMaxAg = seconds(arg)
	case "stale-while-revalidate":
		cc.swr, _ = seconds(arg)
	case "stale-if-error":
		cc.sie, _ = seconds(arg)
	}
}

// seconds reads delta-seconds: digits only, capped at maxDirectiveSeconds;
// -1 and false when malformed.
func seconds(s string) (time.Duration, bool) {
	if s == "" || strings.Trim(s, "0123456789") != "" {
		return -1, false
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil || n > maxDirectiveSeconds { // only ErrRange: too many digits
		n = maxDirectiveSeconds
	}
	return time.Duration(n) * time.Second, true
}

// freshness is an entry's lifetime, decided when it is stored or revalidated.
type freshness struct {
	ttl, swr, sie time.Duration
	// revalidate: every use asks the origin first (no-cache, or a zero TTL).
	revalidate bool
	// store: false for no-store/private (the object passes through, BYPASS).
	store bool
}

// policyDefaults fills p's unset durations with the defaults.
func policyDefaults(p site.EdgePolicy) (ttl, swr, sie, neg time.Duration) {
	ttl, swr, sie, neg = 60*time.Second, 60*time.Second, 24*time.Hour, 10*time.Second
	if p.TTL > 0 {
		ttl = p.TTL.D()
	}
	if p.StaleWhileRevalidate > 0 {
		swr = p.StaleWhileRevalidate.D()
	}
	if p.StaleIfError > 0 {
		sie = p.StaleIfError.D()
	}
	if p.NegativeTTL != nil {
		neg = p.NegativeTTL.D()
	}
	return ttl, swr, sie, neg
}

// freshnessOf decides how long an upstream answer stays fresh: s-maxage over
// max-age over the policy's TTL; the upstream's stale-while-revalidate and
// stale-if-error over the policy's; must-revalidate turns serving stale off.
func freshnessOf(header string, p site.EdgePolicy) freshness {
	ttl, swr, sie, _ := policyDefaults(p)
	cc := parseCacheControl(header)
	f := freshness{ttl: ttl, swr: swr, sie: sie, store: !cc.noStore && !cc.private}
	switch {
	case cc.hasSMaxAg:
		f.ttl = cc.sMaxAge
	case cc.hasMaxAge:
		f.ttl = cc.maxAge
	}
	if cc.swr >= 0 {
		f.swr = cc.swr
	}
	if cc.sie >= 0 {
		f.sie = cc.sie
	}
	if cc.mustReval {
		f.swr, f.sie = 0, 0
	}
	f.revalidate = cc.noCache || f.ttl == 0
	return f
}
