package webhook

import (
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"github.com/coffer/coffer"
)

// MaxURLLength bounds a webhook target URL.
const MaxURLLength = 2048

// maxHostLength is the DNS limit for a name in text form (without trailing dot).
const maxHostLength = 253

// CheckURL validates a webhook target when a subscription is created. It
// returns an *coffer.Error: EINVALID for a malformed URL (not absolute http or
// https, no host, userinfo, port outside 1..65535, too long, a host that is
// neither an IP literal nor an ASCII host name) and EFORBIDDEN for a refused
// target: an IP literal CheckAddr refuses, "localhost" or a name under
// .localhost, a cloud metadata service's name (metadataHosts), or an IPv4 address in any non-canonical numeric form
// (2130706433, 0177.0.0.1, 0x7f.1, 127.1: only filter dodging uses them, and
// resolvers such as glibc's inet_aton turn them into addresses).
// Host names are not resolved here (CheckTarget does): DialContext checks what
// they resolve to at every delivery.
func (g *Guard) CheckURL(raw string) error {
	u, err := parseTarget(raw)
	if err != nil {
		return err
	}
	if err := checkPort(u); err != nil {
		return err
	}
	return g.checkHost(u)
}

func invalidURL(format string, args ...any) error {
	return coffer.Errorf(coffer.EINVALID, "webhook URL: "+format, args...)
}

func forbiddenHost(format string, args ...any) error {
	return coffer.Errorf(coffer.EFORBIDDEN, "webhook target refused: "+format, args...)
}

// parseTarget parses raw and checks everything but port and host.
func parseTarget(raw string) (*url.URL, error) {
	if len(raw) > MaxURLLength {
		return nil, invalidURL("longer than %d bytes", MaxURLLength)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, invalidURL("cannot parse")
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, invalidURL("scheme must be http or https")
	case u.Opaque != "":
		return nil, invalidURL("must be absolute (scheme://host/...)")
	case u.User != nil:
		return nil, invalidURL("user info (user:password@) is not allowed")
	case u.Host == "":
		return nil, invalidURL("host missing")
	}
	return u, nil
}

func checkPort(u *url.URL) error {
	if strings.HasSuffix(u.Host, ":") {
		return invalidURL("empty port")
	}
	p := u.Port()
	if p == "" {
		return nil
	}
	n, err := strconv.Atoi(p)
	if err != nil || n < 1 || n > 65535 {
		return invalidURL("port must be 1..65535")
	}
	return nil
}

// checkHost checks the host of u: an IP literal, a numeric IPv4 form or a name.
func (g *Guard) checkHost(u *url.URL) error {
	host := u.Hostname()
	if strings.HasPrefix(u.Host, "[") {
		ip, err := netip.ParseAddr(host)
		if err != nil || !ip.Is6() {
			return invalidURL("bad IPv6 literal")
		}
		return g.CheckAddr(ip)
	}
	if ip, err := netip.ParseAddr(host); err == nil && ip.Is4() {
		return g.CheckAddr(ip)
	}
	if endsInNumber(host) {
		return g.checkNumericHost(host)
	}
	if err := checkHostName(host); err != nil {
		return err
	}
	name := strings.TrimSuffix(strings.ToLower(host), ".")
	if name == "localhost" || strings.HasSuffix(name, ".localhost") {
		return forbiddenHost("localhost")
	}
	return refuseMetadataHost(host)
}

// checkNumericHost refuses a host that parses as a number: canonical dotted
// quads were handled before, so this is always refused, with the reason
// CheckAddr gives if it has one.
func (g *Guard) checkNumericHost(host string) error {
	ip, ok := parseLegacyIPv4(host)
	if !ok {
		return invalidURL("numeric host is not an IPv4 address")
	}
	if err := g.CheckAddr(ip); err != nil {
		return err
	}
	return forbiddenHost("IPv4 address in non-canonical form; write it as %s", ip)
}

// checkHostName accepts ASCII host names: letters, digits, '-' and '_' in
// labels of 1..63 bytes, an optional trailing dot. Internationalized names
// must be given in their xn-- form (so Unicode look-alike digits cannot
// become an address after IDNA mapping).
func checkHostName(host string) error {
	name := strings.TrimSuffix(host, ".")
	if name == "" || len(name) > maxHostLength {
		return invalidURL("bad host name")
	}
	for label := range strings.SplitSeq(name, ".") {
		if label == "" || len(label) > 63 {
			return invalidURL("bad host name")
		}
		for i := 0; i < len(label); i++ {
			if !isHostNameByte(label[i]) {
				return invalidURL("host name must be ASCII letters, digits, '-', '_' and '.'")
			}
		}
	}
	return nil
}

func isHostNameByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_'
}

// endsInNumber reports whether host's last label (ignoring one trailing dot)
// is a number: decimal digits, or 0x followed by hex digits. Such hosts are
// IPv4 addresses to the WHATWG URL standard and to inet_aton, never DNS names.
func endsInNumber(host string) bool {
	host = strings.TrimSuffix(host, ".")
	last := host[strings.LastIndexByte(host, '.')+1:]
	if last == "" {
		return false
	}
	if len(last) >= 2 && last[0] == '0' && (last[1] == 'x' || last[1] == 'X') {
		_, ok := parseIPv4Part(last)
		return ok
	}
	return strings.Trim(last, "0123456789") == ""
}

// parseLegacyIPv4 parses host as inet_aton and the WHATWG URL standard do:
// 1 to 4 dot-separated parts, each decimal, octal (leading 0) or hex (0x);
// the last part fills the remaining bytes. One trailing dot is ignored.
func parseLegacyIPv4(host string) (netip.Addr, bool) {
	parts := strings.Split(strings.TrimSuffix(host, "."), ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	var v uint64
	for i, p := range parts {
		n, ok := parseIPv4Part(p)
		if !ok {
			return netip.Addr{}, false
		}
		if i < len(parts)-1 {
			if n > 255 {
				return netip.Addr{}, false
			}
			v |= n << (8 * (3 - i))
		} else if n > 1<<(8*(5-len(parts)))-1 {
			return netip.Addr{}, false
		} else {
			v |= n
		}
	}
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}

// parseIPv4Part parses one part of a legacy IPv4 address; values above
// 2^32-1 fail.
func parseIPv4Part(s string) (uint64, bool) {
	base := 10
	switch {
	case len(s) >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'):
		base, s = 16, s[2:]
		if s == "" {
			return 0, true // "0x" is 0 to WHATWG
		}
	case len(s) >= 2 && s[0] == '0':
		base, s = 8, s[1:]
	case s == "":
		return 0, false
	}
	if len(s) > 32 || strings.ContainsAny(s, "+-_") {
		return 0, false
	}
	n, err := strconv.ParseUint(s, base, 32)
	return n, err == nil
}
