package remote

import (
	"net"
	"net/netip"
	"strconv"
	"strings"

	"github.com/coffer/coffer"
)

// Addr is the address of a coffer-imager listening on the network.
type Addr struct {
	Host string // an IP literal or a host name (resolved when dialling)
	Port int
	TLS  bool // https:// or tls://: the connection runs over TLS
}

// String returns host:port, the name the worker has in logs and metrics.
func (a Addr) String() string { return net.JoinHostPort(a.Host, strconv.Itoa(a.Port)) }

// ParseAddrs parses a comma-separated list of worker addresses (--image-workers-remote):
// each is host:port, http://host:port or tcp://host:port (plain TCP), or
// https://host:port or tls://host:port (TLS). The http schemes are accepted because
// they are how addresses are usually written; the protocol is not HTTP. Nothing
// else is allowed: no path, query, user or empty entry, a port of 1-65535, no
// address twice.
func ParseAddrs(s string) ([]Addr, error) {
	var out []Addr
	seen := make(map[string]bool)
	for _, entry := range strings.Split(s, ",") {
		a, err := parseAddr(strings.TrimSpace(entry))
		if err != nil {
			return nil, coffer.Errorf(coffer.EINVALID, "image worker address %q: %s", entry, err.Error())
		}
		if seen[a.String()] {
			return nil, coffer.Errorf(coffer.EINVALID, "image worker address %q is listed twice", a.String())
		}
		seen[a.String()] = true
		out = append(out, a)
	}
	return out, nil
}

// addrError is why an address does not parse.
type addrError string

func (e addrError) Error() string { return string(e) }

// parseAddr parses one entry of ParseAddrs.
func parseAddr(s string) (Addr, error) {
	var a Addr
	if scheme, rest, ok := strings.Cut(s, "://"); ok {
		switch strings.ToLower(scheme) {
		case "http", "tcp":
		case "https", "tls":
			a.TLS = true
		default:
			return a, addrError("scheme must be http, https, tcp or tls")
		}
		s = strings.TrimSuffix(rest, "/")
	}
	if strings.ContainsAny(s, "/?#@ ") {
		return a, addrError("want host:port, without path, query or user")
	}
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return a, addrError("want host:port")
	}
	a.Port, err = strconv.Atoi(port)
	if err != nil || a.Port < 1 || a.Port > 65535 || port[0] == '+' || port[0] == '0' {
		return a, addrError("port must be 1-65535")
	}
	if host == "" || !validHost(host) {
		return a, addrError("host must be an IP address or a DNS name")
	}
	a.Host = host
	return a, nil
}

// validHost accepts IP literals and DNS names of letters, digits, '-' and '.'.
func validHost(h string) bool {
	if _, err := netip.ParseAddr(h); err == nil {
		return !strings.Contains(h, "%") // no IPv6 zones
	}
	if len(h) > 253 {
		return false
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, r := range label {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-') {
				return false
			}
		}
	}
	return true
}
