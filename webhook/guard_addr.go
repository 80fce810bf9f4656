package webhook

import (
	"fmt"
	"net/netip"

	"github.com/coffer/coffer"
)

// specialRange is a network the guard refuses unless GuardConfig.Allow covers it.
type specialRange struct {
	prefix netip.Prefix
	reason string
}

// specialRanges is read-only: the first match gives the reason, so narrower
// ranges (cloud metadata, broadcast) come before the wider ones around them.
// Sources: the IANA IPv4 and IPv6 special-purpose address registries.
var specialRanges = []specialRange{
	{netip.MustParsePrefix("0.0.0.0/8"), "unspecified"},
	{netip.MustParsePrefix("127.0.0.0/8"), "loopback"},
	{netip.MustParsePrefix("10.0.0.0/8"), "private"},
	{netip.MustParsePrefix("172.16.0.0/12"), "private"},
	{netip.MustParsePrefix("192.168.0.0/16"), "private"},
	{netip.MustParsePrefix("169.254.169.254/32"), "cloud metadata"},
	{netip.MustParsePrefix("169.254.0.0/16"), "link-local"},
	{netip.MustParsePrefix("100.100.100.200/32"), "cloud metadata"}, // Alibaba Cloud
	{netip.MustParsePrefix("100.64.0.0/10"), "shared (carrier-grade NAT)"},
	{netip.MustParsePrefix("192.0.0.192/32"), "cloud metadata"},   // Oracle Cloud
	{netip.MustParsePrefix("168.63.129.16/32"), "cloud platform"}, // Azure WireServer (agent, DNS, health probes)
	{netip.MustParsePrefix("192.0.0.0/24"), "IETF protocol assignment"},
	{netip.MustParsePrefix("192.0.2.0/24"), "documentation"},
	{netip.MustParsePrefix("192.88.99.0/24"), "reserved (6to4 relay anycast)"},
	{netip.MustParsePrefix("198.18.0.0/15"), "benchmarking"},
	{netip.MustParsePrefix("198.51.100.0/24"), "documentation"},
	{netip.MustParsePrefix("203.0.113.0/24"), "documentation"},
	{netip.MustParsePrefix("224.0.0.0/4"), "multicast"},
	{netip.MustParsePrefix("255.255.255.255/32"), "broadcast"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved"},

	{netip.MustParsePrefix("::/128"), "unspecified"},
	{netip.MustParsePrefix("::1/128"), "loopback"},
	{netip.MustParsePrefix("fd00:ec2::254/128"), "cloud metadata"}, // AWS IMDS over IPv6
	{netip.MustParsePrefix("fc00::/7"), "private"},
	{netip.MustParsePrefix("fe80::/10"), "link-local"},
	{netip.MustParsePrefix("fec0::/10"), "site-local"},
	{netip.MustParsePrefix("ff00::/8"), "multicast"},
	{netip.MustParsePrefix("100::/64"), "discard"},
	{netip.MustParsePrefix("2001:db8::/32"), "documentation"},
	{netip.MustParsePrefix("3fff::/20"), "documentation"},
	{netip.MustParsePrefix("2001:2::/48"), "benchmarking"},
	{netip.MustParsePrefix("2001:10::/28"), "reserved (ORCHID)"},
	{netip.MustParsePrefix("2001:20::/28"), "reserved (ORCHIDv2)"},
}

var (
	nat64Prefix       = netip.MustParsePrefix("64:ff9b::/96")
	sixToFourPrefix   = netip.MustParsePrefix("2002::/16")
	teredoPrefix      = netip.MustParsePrefix("2001::/32")
	globalUnicastIPv6 = netip.MustParsePrefix("2000::/3")
)

// CheckAddr reports whether ip may be contacted: nil if so, else an
// *coffer.Error with code EFORBIDDEN whose message says why. IPv4-mapped IPv6
// addresses are unmapped first and zones are ignored. GuardConfig.Allow is
// matched against the (unmapped) address itself; IPv4 addresses embedded in
// NAT64 (64:ff9b::/96), 6to4 (2002::/16) and Teredo (2001::/32) addresses are
// checked without it. IPv6 outside 2000::/3 is refused, except NAT64 of a
// public IPv4 address.
func (g *Guard) CheckAddr(ip netip.Addr) error {
	reason := g.refusal(ip)
	if reason == "" {
		return nil
	}
	return &coffer.Error{
		Code:    coffer.EFORBIDDEN,
		Message: "webhook target refused: " + reason + " address",
		Err:     fmt.Errorf("address %s", ip),
	}
}

// refusal is CheckAddr's decision: "" to allow, else the reason.
func (g *Guard) refusal(ip netip.Addr) string {
	ip = ip.WithZone("").Unmap()
	if !ip.IsValid() {
		return "invalid"
	}
	for _, p := range g.allow {
		if p.Contains(ip) {
			return ""
		}
	}
	return specialRefusal(ip)
}

// specialRefusal classifies ip (unmapped, no zone) without the allow-list.
func specialRefusal(ip netip.Addr) string {
	if nat64Prefix.Contains(ip) {
		return embeddedRefusal("NAT64", embeddedAt(ip, 12, 0))
	}
	for _, r := range specialRanges {
		if r.prefix.Contains(ip) {
			return r.reason
		}
	}
	if ip.Is4() {
		return ""
	}
	if !globalUnicastIPv6.Contains(ip) {
		return "reserved (not global unicast)"
	}
	switch {
	case sixToFourPrefix.Contains(ip):
		return embeddedRefusal("6to4", embeddedAt(ip, 2, 0))
	case teredoPrefix.Contains(ip):
		// Teredo: bits 32-63 are the server, the last 32 bits the client
		// address with every bit flipped.
		return embeddedRefusal("Teredo", embeddedAt(ip, 4, 0), embeddedAt(ip, 12, 0xff))
	}
	return ""
}

// embeddedAt returns the IPv4 address in bytes off..off+3 of ip, each byte
// XORed with flip.
func embeddedAt(ip netip.Addr, off int, flip byte) netip.Addr {
	b := ip.As16()
	return netip.AddrFrom4([4]byte{b[off] ^ flip, b[off+1] ^ flip, b[off+2] ^ flip, b[off+3] ^ flip})
}

// embeddedRefusal refuses an embedding when any IPv4 address inside is special.
func embeddedRefusal(kind string, inner ...netip.Addr) string {
	for _, v4 := range inner {
		if r := specialRefusal(v4); r != "" {
			return r + " address inside a " + kind
		}
	}
	return ""
}
