package webhook

import (
	"net/netip"
	"net/url"
	"strings"
	"testing"

	"github.com/coffer/coffer"
)

// FuzzCheckURL: CheckURL never panics, fails only with EINVALID or
// EFORBIDDEN, and whatever it accepts is an absolute http(s) URL without
// userinfo whose host is a public IP literal or an ASCII name that no
// resolver can read as a number.
func FuzzCheckURL(f *testing.F) {
	for _, s := range []string{
		"https://example.com/hook", "http://93.184.216.34:8080/x?y#z", "http://[2606:2800:220:1::1]/",
		"http://127.0.0.1/", "http://2130706433/", "http://0177.0.0.1/", "http://0x7f.1/", "http://127.1/",
		"http://[::ffff:127.0.0.1]/", "http://[64:ff9b::7f00:1]/", "http://[fe80::1%25eth0]/",
		"http://localhost./", "http://a.localhost/", "http://user@x/", "http://x:0/", "http://x:/",
		"http://１２７.０.０.１/", "http://0x/", "http://1.2.3.4./", "HTTP://EXAMPLE.COM./", "http:x", "",
	} {
		f.Add(s)
	}
	g := NewGuard(GuardConfig{}, newGuardResolver(nil), (&guardRecorder{}).dial)
	f.Fuzz(func(t *testing.T, raw string) {
		err := g.CheckURL(raw)
		if err != nil {
			if c := coffer.ErrorCode(err); c != coffer.EINVALID && c != coffer.EFORBIDDEN {
				t.Fatalf("CheckURL(%q): code %q (%v)", raw, c, err)
			}
			return
		}
		fuzzCheckAccepted(t, g, raw)
	})
}

func fuzzCheckAccepted(t *testing.T, g *Guard, raw string) {
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatalf("accepted %q, which net/url cannot parse: %v", raw, err)
	}
	host := u.Hostname()
	if (u.Scheme != "http" && u.Scheme != "https") || u.User != nil || u.Opaque != "" || host == "" {
		t.Fatalf("accepted %q: scheme %q, user %v, opaque %q, host %q", raw, u.Scheme, u.User, u.Opaque, host)
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		if g.CheckAddr(ip) != nil || !ip.Unmap().IsGlobalUnicast() || ip.Unmap().IsPrivate() {
			t.Fatalf("accepted %q with non-public address %s", raw, ip)
		}
		return
	}
	if _, ok := parseLegacyIPv4(host); ok || endsInNumber(host) {
		t.Fatalf("accepted %q whose host %q reads as a number", raw, host)
	}
	name := strings.ToLower(strings.TrimSuffix(host, "."))
	if name == "localhost" || strings.HasSuffix(name, ".localhost") || strings.Trim(name, "abcdefghijklmnopqrstuvwxyz0123456789-_.") != "" {
		t.Fatalf("accepted %q with host name %q", raw, host)
	}
}

// FuzzCheckAddr: every address CheckAddr allows (no allow-list) is global
// unicast by the standard library's own definitions, the IPv4 and the
// IPv4-mapped form of an address get the same answer, and refusals are
// EFORBIDDEN.
func FuzzCheckAddr(f *testing.F) {
	for _, s := range []string{
		"127.0.0.1", "93.184.216.34", "::1", "::ffff:10.0.0.1", "64:ff9b::7f00:1", "2002:7f00:1::",
		"2001:0:4136:e378:8000:63bf:80ff:fffe", "2606:2800:220:1::1", "fd00:ec2::254", "fe80::1",
	} {
		f.Add(netip.MustParseAddr(s).AsSlice())
	}
	g := NewGuard(GuardConfig{}, newGuardResolver(nil), (&guardRecorder{}).dial)
	f.Fuzz(func(t *testing.T, b []byte) {
		ip, ok := netip.AddrFromSlice(b)
		if !ok {
			return
		}
		err := g.CheckAddr(ip)
		if err != nil {
			if coffer.ErrorCode(err) != coffer.EFORBIDDEN {
				t.Fatalf("CheckAddr(%s): %v", ip, err)
			}
		} else if u := ip.Unmap(); !u.IsGlobalUnicast() || u.IsPrivate() || u.IsLoopback() || u.IsLinkLocalUnicast() {
			t.Fatalf("CheckAddr allowed %s", ip)
		}
		if ip.Is4() && (err == nil) != (g.CheckAddr(netip.AddrFrom16(ip.As16())) == nil) {
			t.Fatalf("%s and its IPv4-mapped form disagree", ip)
		}
	})
}
