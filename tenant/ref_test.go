package tenant

import (
	"net/netip"
	"strconv"
	"strings"

	"github.com/coffer/coffer"
)

// This file is a slow, independent statement of what NormalizeHost and Resolve do,
// written with strings, strconv and linear scans rather than the byte loops and
// maps of the real code: the fuzz targets compare the two.

// refNormalize is NormalizeHost by the letter of its doc comment.
func refNormalize(raw string) (string, bool) {
	for i := 0; i < len(raw); i++ {
		if raw[i] >= 0x80 {
			return "", false // checked before lower-casing: Unicode is never folded
		}
	}
	if strings.HasPrefix(raw, "[") {
		return refIPv6(raw)
	}
	host := raw
	if i := strings.Index(raw, ":"); i >= 0 {
		if !refPort(raw[i+1:]) {
			return "", false
		}
		host = raw[:i]
	}
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	if host == "" || len(host) > 253 {
		return "", false
	}
	for _, label := range strings.Split(host, ".") {
		if label == "" || len(label) > 63 || strings.Trim(label, "abcdefghijklmnopqrstuvwxyz0123456789-") != "" {
			return "", false
		}
	}
	return host, true
}

// refIPv6 handles a bracketed literal.
func refIPv6(raw string) (string, bool) {
	end := strings.Index(raw, "]")
	if end < 0 {
		return "", false
	}
	if rest := raw[end+1:]; rest != "" {
		port, ok := strings.CutPrefix(rest, ":")
		if !ok || !refPort(port) {
			return "", false
		}
	}
	a, err := netip.ParseAddr(raw[1:end])
	if err != nil || !a.Is6() || strings.Contains(raw[1:end], "%") {
		return "", false
	}
	return "[" + a.String() + "]", true
}

// refPort: 1 to 5 digits, 1 to 65535.
func refPort(p string) bool {
	n, err := strconv.Atoi(p)
	return err == nil && len(p) <= 5 && strings.Trim(p, "0123456789") == "" && n >= 1 && n <= 65535
}

// refResolve is Resolve by its doc comment, scanning entries and patterns.
func refResolve(entries []Entry, opt Options, host, xfh string, peer netip.Addr, path string) (string, int, string) {
	if xfh != "" && refTrusted(opt, peer) {
		parts := strings.Split(xfh, ",")
		host = strings.Trim(parts[len(parts)-1], " \t")
	}
	h, ok := refNormalize(host)
	if !ok {
		return "", 0, coffer.EINVALID
	}
	id, found := refMatch(entries, opt, h)
	if found && id != "" {
		return id, 0, ""
	}
	if opt.PathPrefix && strings.HasPrefix(path, "/t/") {
		seg, _, slash := strings.Cut(path[3:], "/")
		if slash && seg != "" && refConfigured(entries, seg) {
			return seg, 3 + len(seg), ""
		}
		return "", 0, coffer.ENOTFOUND
	}
	if found {
		return "", 0, ""
	}
	return "", 0, coffer.ENOTFOUND
}

func refTrusted(opt Options, peer netip.Addr) bool {
	for _, p := range opt.TrustedProxies {
		if p.Contains(peer.Unmap()) {
			return true
		}
	}
	return false
}

func refConfigured(entries []Entry, id string) bool {
	for _, e := range entries {
		if e.ID == id && id != "" {
			return true
		}
	}
	return false
}

// refMatch: an exact pattern first, then a one-label wildcard (an entry's, or a
// capturing one whose label is a configured tenant).
func refMatch(entries []Entry, opt Options, h string) (string, bool) {
	norm := func(p string) string { return strings.ToLower(strings.TrimSuffix(p, ".")) }
	under := func(pattern string) (string, bool) {
		suffix, ok := strings.CutPrefix(pattern, "*.")
		label, ok2 := strings.CutSuffix(h, "."+norm(suffix))
		return label, ok && ok2 && label != "" && !strings.Contains(label, ".")
	}
	for _, e := range entries {
		for _, p := range e.Hosts {
			if n, err := NormalizeHost(p); err == nil && !strings.HasPrefix(p, "*.") && n == h {
				return e.ID, true
			}
		}
	}
	for _, e := range entries {
		for _, p := range e.Hosts {
			if _, ok := under(p); ok {
				return e.ID, true
			}
		}
	}
	for _, w := range opt.Wildcards {
		if label, ok := under(w); ok {
			return label, refConfigured(entries, label)
		}
	}
	return "", false
}
