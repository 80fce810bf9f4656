package webhook

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"syscall"
	"time"

	"github.com/coffer/coffer"
)

// GuardConfig configures a Guard.
type GuardConfig struct {
	// Allow lists networks that may be contacted although they are private,
	// loopback or otherwise special: an explicit allow-list for local
	// development (e.g. 127.0.0.0/8). Empty: every special-purpose address is
	// refused. IPv4-mapped IPv6 prefixes (::ffff:a.b.c.d/n, n >= 96) count as
	// their IPv4 prefix.
	Allow []netip.Prefix
}

// Resolver is what the guard resolves host names with; *net.Resolver satisfies it.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// DialFunc dials one already-checked "ip:port".
type DialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// DefaultDialTimeout bounds a TCP connect by the default DialFunc.
const DefaultDialTimeout = 10 * time.Second

// Guard keeps webhook deliveries away from internal networks (SSRF): it
// validates target URLs when subscriptions are created (CheckURL) and, at
// delivery time, resolves each host itself, checks every address and dials
// the checked IP, never the name, so a DNS answer that changes between check
// and connect (rebinding) cannot reach an internal address. A Guard is safe
// for concurrent use.
type Guard struct {
	allow    []netip.Prefix
	resolver Resolver
	dial     DialFunc
}

var _ Resolver = (*net.Resolver)(nil)

// NewGuard returns a Guard. A nil r means net.DefaultResolver; a nil dial
// means a net.Dialer (DefaultDialTimeout) whose Control function checks the
// address actually being connected once more, as a last line of defence.
func NewGuard(cfg GuardConfig, r Resolver, dial DialFunc) *Guard {
	g := &Guard{resolver: r, dial: dial}
	for _, p := range cfg.Allow {
		if p.IsValid() {
			g.allow = append(g.allow, unmapPrefix(p))
		}
	}
	if g.resolver == nil {
		g.resolver = net.DefaultResolver
	}
	if g.dial == nil {
		d := &net.Dialer{Timeout: DefaultDialTimeout, KeepAlive: 30 * time.Second, Control: g.control}
		g.dial = d.DialContext
	}
	return g
}

// unmapPrefix turns ::ffff:a.b.c.d/n (n >= 96) into a.b.c.d/(n-96), since
// CheckAddr unmaps addresses before matching.
func unmapPrefix(p netip.Prefix) netip.Prefix {
	p = p.Masked()
	if a := p.Addr(); a.Is4In6() && p.Bits() >= 96 {
		return netip.PrefixFrom(a.Unmap(), p.Bits()-96)
	}
	return p
}

// control is the default dialer's Control: it sees the socket address about
// to be connected, whatever produced it.
func (g *Guard) control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return forbiddenHost("unparsable socket address %q", address)
	}
	return g.CheckAddr(ap.Addr())
}

// DialContext is for http.Transport. It splits addr into host and port,
// resolves the host with the guard's Resolver (IP literals are parsed, hosts
// that end in a number are refused unresolved), refuses the dial if ANY
// resolved address is refused, then dials the checked addresses in order as
// "ip:port" until one connects. Refusals and a malformed addr are
// *coffer.Error (EFORBIDDEN, EINVALID); lookup and connect failures are the
// resolver's and the DialFunc's errors, wrapped.
func (g *Guard) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, coffer.Errorf(coffer.EINVALID, "webhook dial: bad address %q", addr)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return nil, coffer.Errorf(coffer.EINVALID, "webhook dial: bad port %q", port)
	}
	ips, err := g.resolve(ctx, network, host)
	if err != nil {
		return nil, err
	}
	var errs []error
	for _, ip := range ips {
		conn, err := g.dial(ctx, network, net.JoinHostPort(ip.String(), port))
		if err == nil {
			return conn, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	if len(errs) == 1 {
		return nil, errs[0]
	}
	return nil, errors.Join(errs...)
}

// resolve returns the checked addresses to dial for host, or the refusal.
func (g *Guard) resolve(ctx context.Context, network, host string) ([]netip.Addr, error) {
	if ip, err := netip.ParseAddr(host); err == nil {
		if err := g.CheckAddr(ip); err != nil {
			return nil, err
		}
		return []netip.Addr{ip.Unmap()}, nil
	}
	if host == "" || endsInNumber(host) {
		return nil, forbiddenHost("host %q is not a canonical IP address or a name", host)
	}
	if err := refuseMetadataHost(host); err != nil {
		return nil, err
	}
	ips, err := g.resolver.LookupNetIP(ctx, lookupNetwork(network), host)
	if err != nil {
		return nil, fmt.Errorf("webhook: look up %s: %w", host, err)
	}
	ips = filterFamily(network, ips)
	if len(ips) == 0 {
		return nil, &net.DNSError{Err: "no suitable address", Name: host, IsNotFound: true}
	}
	for i, ip := range ips {
		if reason := g.refusal(ip); reason != "" {
			return nil, &coffer.Error{
				Code:    coffer.EFORBIDDEN,
				Message: fmt.Sprintf("webhook target refused: %s resolves to a %s address", host, reason),
				Err:     fmt.Errorf("address %s", ip),
			}
		}
		ips[i] = ip.Unmap()
	}
	return ips, nil
}

func lookupNetwork(network string) string {
	switch network {
	case "tcp4", "udp4":
		return "ip4"
	case "tcp6", "udp6":
		return "ip6"
	}
	return "ip"
}

// filterFamily drops addresses of the wrong family for tcp4/tcp6.
func filterFamily(network string, ips []netip.Addr) []netip.Addr {
	want := lookupNetwork(network)
	if want == "ip" {
		return append([]netip.Addr(nil), ips...)
	}
	var out []netip.Addr
	for _, ip := range ips {
		if ip.Unmap().Is4() == (want == "ip4") {
			out = append(out, ip)
		}
	}
	return out
}

// Client returns the *http.Client deliveries use: every connection goes
// through DialContext, environment proxies are ignored, redirects are never
// followed (the 3xx response is returned as is), response headers are
// bounded, and the whole exchange is bounded by timeout.
func (g *Guard) Client(timeout time.Duration) *http.Client {
	return &http.Client{
		Transport: &http.Transport{
			Proxy:                  nil,
			DialContext:            g.DialContext,
			TLSHandshakeTimeout:    10 * time.Second,
			ResponseHeaderTimeout:  30 * time.Second,
			IdleConnTimeout:        90 * time.Second,
			MaxIdleConns:           64,
			MaxIdleConnsPerHost:    2,
			MaxResponseHeaderBytes: 16 << 10,
			DisableCompression:     true,
			ForceAttemptHTTP2:      false,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Timeout:       timeout,
	}
}
