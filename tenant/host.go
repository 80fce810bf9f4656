package tenant

import (
	"net/netip"

	"github.com/coffer/coffer"
)

// Sizes of names, from RFC 1035 (a name of at most 253 bytes in text form, labels of
// at most 63) and the tenant id grammar.
const (
	MaxHostLen  = 253
	maxLabelLen = 63
	maxIDLen    = 63
)

// text is what a host arrives as: a string from net/http, bytes from the HTTP/1.1
// fast path. The generic functions below index and slice it without converting, so
// the byte form costs no allocation.
type text interface{ ~string | ~[]byte }

// hostBuf holds one normalized host.
type hostBuf [MaxHostLen]byte

// ValidID returns nil if id is a configurable tenant id: 1 to 63 bytes of a-z, 0-9
// and '-', starting with a letter or digit and not ending in '-'. The default
// tenant's "" is not one: it exists without being configured. Returns EINVALID.
func ValidID(id string) error {
	if !isID(id) {
		return coffer.InvalidField("id", `tenant id: must be 1 to 63 characters of a-z, 0-9 and "-", `+
			`starting with a letter or digit and not ending in "-"`)
	}
	return nil
}

// isID is ValidID as a bool, generic so the captured label of a byte host is
// checked without a copy.
func isID[T text](id T) bool {
	if len(id) == 0 || len(id) > maxIDLen || id[0] == '-' || id[len(id)-1] == '-' {
		return false
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// NormalizeHost returns the canonical form of a Host header value: lower case, with
// no port and no trailing dot; an IPv6 literal in brackets in its canonical text.
// It refuses (EINVALID, field "host") an empty value, a bad port, a name longer than
// 253 bytes or with an empty or over-long label, any byte other than letters,
// digits, '-' and '.' (a raw UTF-8 name must arrive as punycode "xn--...": its
// Unicode twin is refused, never folded into it), userinfo, control characters and
// spaces, and IPv6 zones.
func NormalizeHost(raw string) (string, error) {
	var buf hostBuf
	n, err := normalizeInto(raw, &buf)
	if err != nil {
		return "", err
	}
	return string(buf[:n]), nil
}

// AppendHost appends the normalized form of raw (as NormalizeHost) to dst: the
// byte form for the HTTP/1.1 fast path, which holds the head as bytes; it does not
// allocate when dst has room.
func AppendHost(dst, raw []byte) ([]byte, error) {
	var buf hostBuf
	n, err := normalizeInto(raw, &buf)
	if err != nil {
		return dst, err
	}
	return append(dst, buf[:n]...), nil
}

// normalizeInto writes the normalized form of raw into buf and returns its length.
func normalizeInto[T text](raw T, buf *hostBuf) (int, error) {
	if len(raw) == 0 {
		return 0, hostErr("missing")
	}
	if raw[0] == '[' {
		return ipv6Into(raw, buf)
	}
	name, err := stripPort(raw)
	if err != nil {
		return 0, err
	}
	if len(name) > 0 && name[len(name)-1] == '.' {
		name = name[:len(name)-1]
	}
	return lowerInto(name, buf)
}

// hostErr is the EINVALID error of a malformed host. The value itself is not
// repeated: it may hold control characters meant for a log.
func hostErr(what string) error {
	return coffer.InvalidField("host", "host: "+what)
}

// stripPort returns raw without its ":port", refusing a port that is not 1 to 5
// digits with a value from 1 to 65535 (so also a second ':').
func stripPort[T text](raw T) (T, error) {
	i := 0
	for i < len(raw) && raw[i] != ':' {
		i++
	}
	if i == len(raw) {
		return raw, nil
	}
	if !validPort(raw[i+1:]) {
		return raw, hostErr("bad port (want 1 to 65535)")
	}
	return raw[:i], nil
}

// validPort reports whether p is 1 to 5 digits with a value from 1 to 65535.
func validPort[T text](p T) bool {
	if len(p) == 0 || len(p) > 5 {
		return false
	}
	v := 0
	for i := 0; i < len(p); i++ {
		if p[i] < '0' || p[i] > '9' {
			return false
		}
		v = v*10 + int(p[i]-'0')
	}
	return v >= 1 && v <= 65535
}

// lowerInto copies name into buf in lower case, checking every byte and label.
func lowerInto[T text](name T, buf *hostBuf) (int, error) {
	if len(name) == 0 {
		return 0, hostErr("missing")
	}
	if len(name) > MaxHostLen {
		return 0, hostErr("longer than 253 bytes")
	}
	label := 0
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c == '.' {
			if label == 0 {
				return 0, hostErr("empty label")
			}
			label = 0
		} else if label++; label > maxLabelLen {
			return 0, hostErr("a label is longer than 63 bytes")
		}
		c, err := hostByte(c)
		if err != nil {
			return 0, err
		}
		buf[i] = c
	}
	if label == 0 {
		return 0, hostErr("empty label")
	}
	return len(name), nil
}

// hostByte returns c in lower case if it may appear in a host name.
func hostByte(c byte) (byte, error) {
	switch {
	case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '-', c == '.':
		return c, nil
	case c >= 'A' && c <= 'Z':
		return c + 'a' - 'A', nil
	case c == '@':
		return 0, hostErr("userinfo is not allowed")
	case c <= ' ' || c == 0x7f:
		return 0, hostErr("control characters and spaces are not allowed")
	case c >= 0x80:
		return 0, hostErr("non-ASCII name: send international names as punycode (xn--...)")
	}
	return 0, hostErr("only letters, digits, '-' and '.' are allowed")
}

// ipv6Into handles "[addr]" or "[addr]:port": the canonical "[addr]", never with a
// zone. IPv4 addresses in brackets are refused, as in URLs.
func ipv6Into[T text](raw T, buf *hostBuf) (int, error) {
	end := 1
	for end < len(raw) && raw[end] != ']' {
		end++
	}
	if end == len(raw) {
		return 0, hostErr("unclosed '['")
	}
	if rest := raw[end+1:]; len(rest) > 0 && (rest[0] != ':' || !validPort(rest[1:])) {
		return 0, hostErr("bad port after an IPv6 literal (want 1 to 65535)")
	}
	a, err := netip.ParseAddr(string(raw[1:end]))
	if err != nil || !a.Is6() || a.Zone() != "" {
		return 0, hostErr("not an IPv6 address in brackets (zones are not allowed)")
	}
	out := append(a.AppendTo(append(buf[:0], '[')), ']')
	return len(out), nil
}
