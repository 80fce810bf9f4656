package tenant

import (
	"fmt"
	"net/http"
	"net/netip"
	"strings"

	"github.com/coffer/coffer"
)

// Entry binds host patterns to one tenant.
type Entry struct {
	// ID is a ValidID, or "" for the deployment's default tenant (say, bound to
	// the hostname it had before tenants existed).
	ID string
	// Hosts are exact names ("files.acme.com") or one-label wildcards
	// ("*.acme.com": every name one label below acme.com is this tenant), in any
	// case, without a port.
	Hosts []string
}

// Options are a Resolver's deployment-wide settings.
type Options struct {
	// Wildcards are capturing patterns ("*.files.example.com"): the one label
	// matched is the tenant id, so acme.files.example.com is tenant "acme" if
	// "acme" is configured (an Entry), and not found otherwise.
	Wildcards []string
	// TrustedProxies: X-Forwarded-Host is used instead of Host only when the peer
	// address is inside one of these.
	TrustedProxies []netip.Prefix
	// PathPrefix lets /t/{tenant}/rest select a tenant when the host does not:
	// for deployments without a DNS name per tenant.
	PathPrefix bool
}

// Source says what selected the tenant.
type Source uint8

// Sources of a Result.
const (
	ByHost          Source = iota // the Host header
	ByForwardedHost               // X-Forwarded-Host from a trusted proxy
	ByPath                        // a /t/{tenant}/ path prefix
)

// Result is the outcome of a resolution.
type Result struct {
	TenantID   string // "" is the default tenant
	PathOffset int    // the request continues with path[PathOffset:] (past "/t/{tenant}")
	Source     Source
}

// Path returns the path the request continues with: p without the tenant prefix.
func (r Result) Path(p string) string { return p[r.PathOffset:] }

// binding is what a wildcard suffix maps to.
type binding struct {
	id      string // the tenant of a non-capturing wildcard
	capture bool   // the matched label is the tenant id
}

// Resolver picks the tenant of a request. It is immutable once built and safe for
// concurrent use; when tenants change, build a new one and swap a pointer to it.
// Exact hosts are one map lookup, wildcards one more (the name minus its first
// label); no allocation on a hit.
type Resolver struct {
	exact      map[string]string  // normalized host → tenant id
	wild       map[string]binding // normalized suffix (after "*.") → binding
	ids        map[string]string  // configured tenant id → the same string, to return without a copy
	proxies    []netip.Prefix
	pathPrefix bool
}

// NewResolver builds a resolver over entries. Returns EINVALID for a bad tenant id,
// a malformed pattern, an id listed twice, or a host or wildcard bound twice.
func NewResolver(entries []Entry, opt Options) (*Resolver, error) {
	r := &Resolver{
		exact: map[string]string{}, wild: map[string]binding{}, ids: map[string]string{},
		proxies: opt.TrustedProxies, pathPrefix: opt.PathPrefix,
	}
	for _, e := range entries {
		if err := r.addEntry(e); err != nil {
			return nil, err
		}
	}
	for i, p := range opt.Wildcards {
		if err := r.addPattern(p, binding{capture: true}, fmt.Sprintf("wildcards[%d]", i)); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// addEntry adds one tenant and its hosts.
func (r *Resolver) addEntry(e Entry) error {
	if e.ID != "" {
		if err := ValidID(e.ID); err != nil {
			return err
		}
		if _, dup := r.ids[e.ID]; dup {
			return coffer.InvalidField("id", fmt.Sprintf("tenant %q is listed twice", e.ID))
		}
		r.ids[e.ID] = e.ID
	}
	for i, h := range e.Hosts {
		if err := r.addPattern(h, binding{id: e.ID}, fmt.Sprintf("hosts[%d]", i)); err != nil {
			return coffer.InvalidField(coffer.ErrorField(err), fmt.Sprintf("tenant %q: %s", e.ID, coffer.ErrorMessage(err)))
		}
	}
	return nil
}

// addPattern adds an exact host or a "*." wildcard; field names it in errors.
func (r *Resolver) addPattern(p string, b binding, field string) error {
	suffix, wild := strings.CutPrefix(p, "*.")
	host, err := patternHost(suffix)
	if err != nil {
		return coffer.InvalidField(field, fmt.Sprintf("host pattern %q: %s", p, coffer.ErrorMessage(err)))
	}
	if wild {
		if _, dup := r.wild[host]; dup || host[0] == '[' {
			return coffer.InvalidField(field, fmt.Sprintf("host pattern %q: bound twice, or a wildcard over an IP literal", p))
		}
		r.wild[host] = b
		return nil
	}
	if _, dup := r.exact[host]; dup {
		return coffer.InvalidField(field, fmt.Sprintf("host %q is bound twice", p))
	}
	r.exact[host] = b.id
	return nil
}

// patternHost normalizes the host of a pattern, which may not carry a port or a
// second '*'.
func patternHost(p string) (string, error) {
	if strings.LastIndexByte(p, ':') > strings.LastIndexByte(p, ']') {
		return "", hostErr("a pattern has no port")
	}
	return NormalizeHost(p)
}

// Resolve returns the tenant of a request from its Host header, its
// X-Forwarded-Host header (all its values joined by ",": the right-most, which the
// trusted proxy added, is used, and only when peer is a trusted proxy) and its raw
// path. A host bound to a tenant wins over the path: /t/{x}/ is then an ordinary
// path of that tenant, so one tenant's files are never served from another's
// origin. The path prefix is read when the host is unknown or the default
// tenant's. Returns EINVALID for a malformed host and ENOTFOUND ("not found",
// naming nothing) when no tenant matches.
func (r *Resolver) Resolve(host, xfh string, peer netip.Addr, path string) (Result, error) {
	return resolve(r, host, xfh, peer, path)
}

// ResolveBytes is Resolve for the HTTP/1.1 fast path, which holds the head as bytes.
// A hit costs no allocation, except for an IPv6 literal host (one: netip parses a
// string).
func (r *Resolver) ResolveBytes(host, xfh []byte, peer netip.Addr, path []byte) (Result, error) {
	return resolve(r, host, xfh, peer, path)
}

// ForwardedHost returns the X-Forwarded-Host value Resolve takes from h: the
// header's lines joined by "," (a lone line as it is, without a copy).
func ForwardedHost(h http.Header) string {
	v := h.Values("X-Forwarded-Host")
	if len(v) == 1 {
		return v[0]
	}
	return strings.Join(v, ",")
}

// EffectiveHost returns the host a request names as Resolve reads it: the
// right-most X-Forwarded-Host value (xfh: all its lines joined, ForwardedHost)
// when there is one and peer is a trusted proxy, else host. Whatever else routes by
// host (sites) must read the same one.
func (r *Resolver) EffectiveHost(host, xfh string, peer netip.Addr) string {
	if xfh != "" && r.trusted(peer) {
		return lastValue(xfh)
	}
	return host
}

// resolve is Resolve over either form of the request's text.
func resolve[T text](r *Resolver, host, xfh T, peer netip.Addr, path T) (Result, error) {
	src := ByHost
	if len(xfh) > 0 && r.trusted(peer) {
		host, src = lastValue(xfh), ByForwardedHost
	}
	var buf hostBuf
	n, err := normalizeInto(host, &buf)
	if err != nil {
		return Result{}, err
	}
	id, found := r.lookup(buf[:n])
	if found && id != "" {
		return Result{TenantID: id, Source: src}, nil
	}
	if r.pathPrefix && hasTenantPrefix(path) {
		return byPath(r, path)
	}
	if found {
		return Result{Source: src}, nil
	}
	return Result{}, notFound()
}

// notFound is the answer for an unknown tenant: it names nothing.
func notFound() error { return coffer.Errorf(coffer.ENOTFOUND, "not found") }

// trusted reports whether peer is inside a trusted proxy prefix.
func (r *Resolver) trusted(peer netip.Addr) bool {
	peer = peer.Unmap()
	for _, p := range r.proxies {
		if p.Contains(peer) {
			return true
		}
	}
	return false
}

// lastValue returns the right-most comma-separated element of v, without spaces
// and tabs around it.
func lastValue[T text](v T) T {
	i := len(v)
	for i > 0 && v[i-1] != ',' {
		i--
	}
	v = v[i:]
	for len(v) > 0 && (v[0] == ' ' || v[0] == '\t') {
		v = v[1:]
	}
	for len(v) > 0 && (v[len(v)-1] == ' ' || v[len(v)-1] == '\t') {
		v = v[:len(v)-1]
	}
	return v
}

// lookup finds the tenant of a normalized host: exact first, then the wildcard of
// its suffix past the first label.
func (r *Resolver) lookup(h []byte) (string, bool) {
	if id, ok := r.exact[string(h)]; ok {
		return id, true
	}
	dot := 0
	for dot < len(h) && h[dot] != '.' {
		dot++
	}
	if dot == len(h) {
		return "", false
	}
	b, ok := r.wild[string(h[dot+1:])]
	if !ok || !b.capture {
		return b.id, ok
	}
	id, ok := r.ids[string(h[:dot])]
	return id, ok
}

// tenantPrefix starts a path naming its tenant.
const tenantPrefix = "/t/"

// hasTenantPrefix reports whether path starts with "/t/".
func hasTenantPrefix[T text](path T) bool {
	return len(path) >= len(tenantPrefix) && path[0] == '/' && path[1] == 't' && path[2] == '/'
}

// byPath resolves "/t/{tenant}/rest", which hasTenantPrefix accepted: the tenant
// must be configured and its segment followed by '/'. The segment is matched as
// sent (not unescaped). The request continues with "/rest".
func byPath[T text](r *Resolver, path T) (Result, error) {
	var seg [maxIDLen]byte
	n := 0
	for i := len(tenantPrefix); i < len(path); i++ {
		if path[i] == '/' {
			id, ok := r.ids[string(seg[:n])]
			if !ok || n == 0 {
				break
			}
			return Result{TenantID: id, PathOffset: i, Source: ByPath}, nil
		}
		if n == len(seg) {
			break
		}
		seg[n] = path[i]
		n++
	}
	return Result{}, notFound()
}

// Reserved reports whether the normalized host h is, or may become, a tenant's,
// and what reserves it: an exact host of a tenant (the default tenant's included),
// or a name one label below a wildcard whatever that label is (under a capturing
// wildcard a tenant of that id may be created later). A site may not take such a
// host: a tenant always wins.
func (r *Resolver) Reserved(h string) (why string, reserved bool) {
	if id, ok := r.exact[h]; ok {
		if id == "" {
			return "the default tenant's host", true
		}
		return "a tenant's host", true
	}
	if b, ok := r.wild[h]; ok && b.capture {
		return "the domain of the tenant wildcard *." + h, true
	}
	dot := strings.IndexByte(h, '.')
	if dot < 0 {
		return "", false
	}
	b, ok := r.wild[h[dot+1:]]
	switch {
	case !ok:
		return "", false
	case b.capture:
		return "a name under the tenant wildcard *." + h[dot+1:], true
	}
	return "a name under a tenant's wildcard host", true
}

// IPLike reports whether the normalized host h is an IP address, or a name a
// browser reads as one: an IPv6 literal in brackets, or a name whose last label
// is a number ("127.1", "0x7f.1" and "2130706433" are 127.0.0.1 to a WHATWG URL
// parser).
func IPLike(h string) bool {
	if strings.HasPrefix(h, "[") {
		return true
	}
	last := h[strings.LastIndexByte(h, '.')+1:]
	if strings.HasPrefix(last, "0x") {
		return true
	}
	for i := 0; i < len(last); i++ {
		if last[i] < '0' || last[i] > '9' {
			return false
		}
	}
	return last != ""
}
