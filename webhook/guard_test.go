package webhook

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coffer/coffer"
)

// HARD RULE for this file: nothing here may open a connection outside
// 127.0.0.0/8 and ::1, even with a broken guard. Non-loopback targets are
// only checked (CheckAddr, CheckURL) or "dialed" through guardRecorder, and
// names are only resolved by guardResolver, never by DNS.

// guardResolver is a fake Resolver. Each host has a list of successive
// answers; the last one repeats. Unknown hosts are "not found".
type guardResolver struct {
	mu      sync.Mutex
	answers map[string][][]netip.Addr
	calls   map[string]int
}

func newGuardResolver(static map[string][]string) *guardResolver {
	r := &guardResolver{answers: map[string][][]netip.Addr{}, calls: map[string]int{}}
	for host, addrs := range static {
		r.answers[host] = [][]netip.Addr{guardAddrs(addrs...)}
	}
	return r
}

// then appends an answer for host, for the next lookup after the previous ones.
func (r *guardResolver) then(host string, addrs ...string) *guardResolver {
	r.answers[host] = append(r.answers[host], guardAddrs(addrs...))
	return r
}

func (r *guardResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	seq := r.answers[host]
	if len(seq) == 0 {
		return nil, &net.DNSError{Err: "no such host (fake resolver)", Name: host, IsNotFound: true}
	}
	i := min(r.calls[host], len(seq)-1)
	r.calls[host]++
	return append([]netip.Addr(nil), seq[i]...), nil
}

func guardAddrs(ss ...string) []netip.Addr {
	out := make([]netip.Addr, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParseAddr(s)
	}
	return out
}

// guardRecorder is a DialFunc that records the address instead of dialing.
type guardRecorder struct {
	mu    sync.Mutex
	addrs []string
}

var errGuardRecorded = errors.New("recorded, not dialed")

func (d *guardRecorder) dial(_ context.Context, _, addr string) (net.Conn, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.addrs = append(d.addrs, addr)
	return nil, errGuardRecorded
}

func (d *guardRecorder) dialed() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.addrs...)
}

// guardTestResolver maps the names the tests use; "2130706433" and friends
// mimic glibc's inet_aton, which turns numeric forms into addresses.
func guardTestResolver() *guardResolver {
	return newGuardResolver(map[string][]string{
		"2130706433":    {"127.0.0.1"},
		"0177.0.0.1":    {"127.0.0.1"},
		"0x7f.1":        {"127.0.0.1"},
		"localhost":     {"127.0.0.1", "::1"},
		"loopback.test": {"127.0.0.1"},
		"metadata.test": {"169.254.169.254"},
		"private.test":  {"10.1.2.3"},
		"v6local.test":  {"::1"},
		"mapped.test":   {"::ffff:127.0.0.1"},
		"example.test":  {"93.184.216.34"},
		"v6.test":       {"2606:2800:220:1:248:1893:25c8:1946"},
		"mixed.test":    {"93.184.216.34", "10.0.0.1"},
		"mixed2.test":   {"192.168.1.1", "93.184.216.34"},
		"mixed6.test":   {"2606:2800:220:1:248:1893:25c8:1946", "::1"},
		"dual.test":     {"2606:2800:220:1:248:1893:25c8:1946", "93.184.216.34"},
		"empty.test":    {},
	})
}

func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	if got := coffer.ErrorCode(err); got != code {
		t.Fatalf("error code %q, want %q (err: %v)", got, code, err)
	}
}

func TestGuardCheckAddr(t *testing.T) {
	g := NewGuard(GuardConfig{}, guardTestResolver(), (&guardRecorder{}).dial)
	refused := map[string]string{
		"0.0.0.0": "unspecified", "0.1.2.3": "unspecified", "::": "unspecified",
		"127.0.0.1": "loopback", "127.255.255.254": "loopback", "::1": "loopback",
		"::ffff:127.0.0.1": "loopback", "::ffff:10.0.0.1": "private",
		"10.0.0.1": "private", "10.255.255.255": "private", "172.16.0.1": "private",
		"172.31.255.255": "private", "192.168.1.1": "private", "fc00::1": "private", "fd12:3456::1": "private",
		"169.254.169.254": "cloud metadata", "fd00:ec2::254": "cloud metadata",
		"::ffff:169.254.169.254": "cloud metadata", "100.100.100.200": "cloud metadata",
		"192.0.0.192": "cloud metadata",
		"169.254.0.1": "link-local", "fe80::1": "link-local", "fe80::1%eth0": "link-local",
		"100.64.0.1": "carrier-grade NAT", "100.127.255.255": "carrier-grade NAT",
		"192.0.0.8": "IETF protocol",
		"192.0.2.1": "documentation", "198.51.100.7": "documentation", "203.0.113.9": "documentation",
		"2001:db8::1": "documentation", "3fff::1": "documentation",
		"198.18.0.1": "benchmarking", "198.19.255.255": "benchmarking", "2001:2::1": "benchmarking",
		"224.0.0.1": "multicast", "239.255.255.250": "multicast", "ff02::1": "multicast", "ff05::2": "multicast",
		"240.0.0.1": "reserved", "255.255.255.254": "reserved", "255.255.255.255": "broadcast",
		"192.88.99.1":                          "reserved",
		"fec0::1":                              "site-local",
		"100::1":                               "discard",
		"::7f00:1":                             "reserved", // IPv4-compatible (deprecated)
		"64:ff9b:1::1":                         "reserved", // local-use NAT64
		"5f00::1":                              "reserved",
		"2001:10::1":                           "ORCHID",
		"64:ff9b::7f00:1":                      "loopback address inside a NAT64",
		"64:ff9b::a9fe:a9fe":                   "cloud metadata address inside a NAT64",
		"64:ff9b::a00:1":                       "private address inside a NAT64",
		"2002:7f00:1::":                        "loopback address inside a 6to4",
		"2002:a9fe:a9fe::1":                    "cloud metadata address inside a 6to4",
		"2002:c0a8:101:1::1":                   "private address inside a 6to4",
		"2001:0:4136:e378:8000:63bf:80ff:fffe": "loopback address inside a Teredo", // client 127.0.0.1
		"2001:0:a00:1:8000:63bf:3fff:fdd2":     "private address inside a Teredo",  // server 10.0.0.1
		"2001:0:4136:e378:8000:63bf:f5ff:fffe": "private address inside a Teredo",  // client 10.0.0.1
	}
	for addr, reason := range refused {
		err := g.CheckAddr(netip.MustParseAddr(addr))
		wantCode(t, err, coffer.EFORBIDDEN)
		if msg := coffer.ErrorMessage(err); !strings.Contains(msg, reason) {
			t.Errorf("CheckAddr(%s) = %q, want reason %q", addr, msg, reason)
		}
	}
	for _, addr := range []string{
		"93.184.216.34", "8.8.8.8", "1.1.1.1", "172.15.255.255", "172.32.0.0", "100.63.255.255",
		"100.128.0.0", "169.253.255.255", "192.0.3.1", "198.20.0.1", "223.255.255.255", "::ffff:93.184.216.34",
		"2606:2800:220:1:248:1893:25c8:1946", "2a00:1450:4001:80b::200e",
		"64:ff9b::5db8:d822", "2002:5db8:d822::1", "2001:0:4136:e378:8000:63bf:a247:27dd",
	} {
		if err := g.CheckAddr(netip.MustParseAddr(addr)); err != nil {
			t.Errorf("CheckAddr(%s) = %v, want allowed", addr, err)
		}
	}
	wantCode(t, g.CheckAddr(netip.Addr{}), coffer.EFORBIDDEN)
}

func TestGuardAllow(t *testing.T) {
	g := NewGuard(GuardConfig{Allow: []netip.Prefix{
		netip.MustParsePrefix("127.0.0.0/8"),
		netip.MustParsePrefix("::ffff:10.1.0.0/112"), // same as 10.1.0.0/16
		netip.MustParsePrefix("fd00::1:5/64"),        // not masked on purpose
		{},                                           // invalid: ignored
	}}, guardTestResolver(), (&guardRecorder{}).dial)
	for _, addr := range []string{"127.0.0.1", "127.9.9.9", "::ffff:127.0.0.1", "10.1.2.3", "::ffff:10.1.2.3", "fd00::abcd"} {
		if err := g.CheckAddr(netip.MustParseAddr(addr)); err != nil {
			t.Errorf("CheckAddr(%s) = %v, want allowed", addr, err)
		}
	}
	// The allow-list is about the address itself: not ::1, not other private
	// networks, and not loopback embedded in NAT64/6to4.
	for _, addr := range []string{"::1", "10.2.0.1", "169.254.169.254", "fd01::1", "64:ff9b::7f00:1", "2002:7f00:1::"} {
		wantCode(t, g.CheckAddr(netip.MustParseAddr(addr)), coffer.EFORBIDDEN)
	}
	// Non-canonical numeric hosts stay refused even when their address is allowed.
	wantCode(t, g.CheckURL("http://2130706433/"), coffer.EFORBIDDEN)
	if err := g.CheckURL("http://127.0.0.1:8080/hook"); err != nil {
		t.Errorf("allowed literal: %v", err)
	}
}

func TestGuardCheckURL(t *testing.T) {
	g := NewGuard(GuardConfig{}, guardTestResolver(), (&guardRecorder{}).dial)
	cases := map[string]string{
		"https://example.com/hook":                         "",
		"http://example.com:8080/a?b=c#d":                  "",
		"HTTPS://Hooks.Example.COM./x":                     "",
		"https://xn--bcher-kva.example/":                   "",
		"http://93.184.216.34/":                            "",
		"http://[2606:2800:220:1:248:1893:25c8:1946]:443/": "",
		"http://under_score.example/":                      "",
		"http://1.example/":                                "",
		"http://127.0.0.1.nip.io/":                         "", // a name: checked at dial time
		"ftp://example.com/":                               coffer.EINVALID,
		"file:///etc/passwd":                               coffer.EINVALID,
		"gopher://127.0.0.1/":                              coffer.EINVALID,
		"http:example.com":                                 coffer.EINVALID,
		"//example.com/":                                   coffer.EINVALID,
		"/relative":                                        coffer.EINVALID,
		"":                                                 coffer.EINVALID,
		"http:///path":                                     coffer.EINVALID,
		"http://user:pw@example.com/":                      coffer.EINVALID,
		"http://user@example.com/":                         coffer.EINVALID,
		"http://example.com:0/":                            coffer.EINVALID,
		"http://example.com:65536/":                        coffer.EINVALID,
		"http://example.com:/":                             coffer.EINVALID,
		"http://example.com:99999999999999999999/":         coffer.EINVALID,
		"http://exa mple.com/":                             coffer.EINVALID,
		"http://a..b/":                                     coffer.EINVALID,
		"http://.example.com/":                             coffer.EINVALID,
		"http://bücher.example/":                           coffer.EINVALID,
		"http://１２７.０.０.１/":                                coffer.EINVALID, // fullwidth digits: IDNA would map them to 127.0.0.1
		"http://" + strings.Repeat("a", 64) + ".example/":  coffer.EINVALID,
		"https://example.com/" + strings.Repeat("a", MaxURLLength): coffer.EINVALID,
		"http://[::1/":                            coffer.EINVALID,
		"http://[1.2.3.4]/":                       coffer.EINVALID,
		"http://1.2.3.4.5/":                       coffer.EINVALID,
		"http://1.2.3.08/":                        coffer.EINVALID,
		"http://4294967296/":                      coffer.EINVALID,
		"http://256.0.0.1/":                       coffer.EINVALID,
		"http://example.123/":                     coffer.EINVALID,
		"http://127.0.0.1/":                       coffer.EFORBIDDEN,
		"http://127.0.0.1:8080/":                  coffer.EFORBIDDEN,
		"http://[::1]/":                           coffer.EFORBIDDEN,
		"http://[::ffff:127.0.0.1]/":              coffer.EFORBIDDEN,
		"http://[0:0:0:0:0:ffff:7f00:1]/":         coffer.EFORBIDDEN,
		"http://[fe80::1%25eth0]/":                coffer.EFORBIDDEN,
		"http://[64:ff9b::7f00:1]/":               coffer.EFORBIDDEN,
		"http://[2002:7f00:1::]/":                 coffer.EFORBIDDEN,
		"http://2130706433/":                      coffer.EFORBIDDEN,
		"http://0177.0.0.1/":                      coffer.EFORBIDDEN,
		"http://0x7f.0.0.1/":                      coffer.EFORBIDDEN,
		"http://0x7F000001/":                      coffer.EFORBIDDEN,
		"http://127.1/":                           coffer.EFORBIDDEN,
		"http://127.0.1/":                         coffer.EFORBIDDEN,
		"http://127.0.0.1./":                      coffer.EFORBIDDEN,
		"http://%31%32%37.0.0.1/":                 coffer.EINVALID, // net/url refuses escapes here
		"http://169.254.169.254/latest/meta-data": coffer.EFORBIDDEN,
		"http://10.0.0.1/":                        coffer.EFORBIDDEN,
		"http://0/":                               coffer.EFORBIDDEN,
		"http://0x/":                              coffer.EFORBIDDEN,
		"http://1572395042/":                      coffer.EFORBIDDEN, // 93.184.216.34, public but non-canonical
		"http://093.184.216.34/":                  coffer.EINVALID,   // "093" is not octal: no address at all
		"http://8.8.8.010/":                       coffer.EFORBIDDEN,
		"http://localhost/":                       coffer.EFORBIDDEN,
		"http://LOCALHOST.:8080/":                 coffer.EFORBIDDEN,
		"http://api.localhost/":                   coffer.EFORBIDDEN,
	}
	for raw, code := range cases {
		err := g.CheckURL(raw)
		if got := coffer.ErrorCode(err); got != code {
			t.Errorf("CheckURL(%q) = %v (code %q), want code %q", raw, err, got, code)
		}
	}
}

func TestGuardParseLegacyIPv4(t *testing.T) {
	cases := map[string]string{
		"2130706433": "127.0.0.1", "0177.0.0.1": "127.0.0.1", "0x7f.0.0.1": "127.0.0.1",
		"0x7f.1": "127.0.0.1", "127.1": "127.0.0.1", "127.0.1": "127.0.0.1", "0x7F000001": "127.0.0.1",
		"017700000001": "127.0.0.1", "1.2.3.4": "1.2.3.4", "1.2.3.4.": "1.2.3.4", "0": "0.0.0.0",
		"0x": "0.0.0.0", "10.0x10203": "10.1.2.3", "4294967295": "255.255.255.255",
		"1.2.3.256": "", "1.2.65535": "1.2.255.255", "1.2.65536": "", "1.2.3.4.5": "", "08": "",
		"4294967296": "", "": "", "1..2": "", "-1": "", "+1": "", "0x-1": "", "1_000": "",
	}
	for in, want := range cases {
		ip, ok := parseLegacyIPv4(in)
		got := ""
		if ok {
			got = ip.String()
		}
		if got != want {
			t.Errorf("parseLegacyIPv4(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestGuardRefusedTargets runs the must-refuse list through CheckURL and
// DialContext (fake resolver, recording dialer): nothing may be dialed.
func TestGuardRefusedTargets(t *testing.T) {
	rec := &guardRecorder{}
	g := NewGuard(GuardConfig{}, guardTestResolver(), rec.dial)
	for _, hostport := range []string{
		"127.0.0.1:80", "[::1]:80", "[::ffff:127.0.0.1]:80", "2130706433:80", "0177.0.0.1:80", "0x7f.1:80",
		"169.254.169.254:80", "10.0.0.1:80", "10.200.3.4:443", "10.255.255.255:80", "172.16.0.1:80",
		"172.31.255.255:80", "192.168.1.1:80", "[64:ff9b::7f00:1]:80", "[2002:7f00:1::]:80",
		"[2001:0:4136:e378:8000:63bf:80ff:fffe]:80", "[fd00:ec2::254]:80", "localhost:80",
		"loopback.test:80", "metadata.test:80", "private.test:80", "v6local.test:80", "mapped.test:80",
	} {
		_, err := g.DialContext(context.Background(), "tcp", hostport)
		wantCode(t, err, coffer.EFORBIDDEN)
		if hostport != "localhost:80" && !strings.HasSuffix(strings.Split(hostport, ":")[0], ".test") {
			wantCode(t, g.CheckURL("http://"+hostport+"/"), coffer.EFORBIDDEN)
		}
	}
	wantCode(t, g.CheckURL("http://localhost:80/"), coffer.EFORBIDDEN)
	if d := rec.dialed(); len(d) != 0 {
		t.Fatalf("refused targets were dialed: %v", d)
	}
}

// TestGuardAllowedTargets: public targets are dialed by IP literal, never by name.
func TestGuardAllowedTargets(t *testing.T) {
	cases := map[string]string{
		"93.184.216.34:80":          "93.184.216.34:80",
		"[::ffff:93.184.216.34]:80": "93.184.216.34:80",
		"example.test:443":          "93.184.216.34:443",
		"v6.test:443":               "[2606:2800:220:1:248:1893:25c8:1946]:443",
		"[64:ff9b::5db8:d822]:80":   "[64:ff9b::5db8:d822]:80",
	}
	for hostport, want := range cases {
		rec := &guardRecorder{}
		g := NewGuard(GuardConfig{}, guardTestResolver(), rec.dial)
		if _, err := g.DialContext(context.Background(), "tcp", hostport); !errors.Is(err, errGuardRecorded) {
			t.Fatalf("DialContext(%s) = %v, want the recorder's error", hostport, err)
		}
		if d := rec.dialed(); len(d) != 1 || d[0] != want {
			t.Errorf("DialContext(%s) dialed %v, want [%s]", hostport, d, want)
		}
	}
}

func TestGuardMixedAnswersRefused(t *testing.T) {
	rec := &guardRecorder{}
	g := NewGuard(GuardConfig{}, guardTestResolver(), rec.dial)
	for _, host := range []string{"mixed.test", "mixed2.test", "mixed6.test"} {
		_, err := g.DialContext(context.Background(), "tcp", host+":443")
		wantCode(t, err, coffer.EFORBIDDEN)
	}
	if d := rec.dialed(); len(d) != 0 {
		t.Fatalf("mixed answers were dialed: %v", d)
	}
}

// TestGuardRebindingRecorded: the resolver answers public, then loopback;
// every dial is checked against the answer it dials.
func TestGuardRebindingRecorded(t *testing.T) {
	res := newGuardResolver(nil).then("rebind.test", "93.184.216.34").then("rebind.test", "127.0.0.1")
	rec := &guardRecorder{}
	g := NewGuard(GuardConfig{}, res, rec.dial)
	if _, err := g.DialContext(context.Background(), "tcp", "rebind.test:80"); !errors.Is(err, errGuardRecorded) {
		t.Fatalf("first dial: %v", err)
	}
	_, err := g.DialContext(context.Background(), "tcp", "rebind.test:80")
	wantCode(t, err, coffer.EFORBIDDEN)
	if d := rec.dialed(); len(d) != 1 || d[0] != "93.184.216.34:80" {
		t.Fatalf("dialed %v, want only [93.184.216.34:80]", d)
	}
}

func TestGuardDialContextErrors(t *testing.T) {
	rec := &guardRecorder{}
	g := NewGuard(GuardConfig{}, guardTestResolver(), rec.dial)
	ctx := context.Background()
	for _, addr := range []string{"nohost", "example.test:http", "example.test:0", "example.test:70000", ":80"} {
		_, err := g.DialContext(ctx, "tcp", addr)
		if code := coffer.ErrorCode(err); code != coffer.EINVALID && code != coffer.EFORBIDDEN {
			t.Errorf("DialContext(%q) = %v", addr, err)
		}
	}
	var dnsErr *net.DNSError
	if _, err := g.DialContext(ctx, "tcp", "unknown.test:80"); !errors.As(err, &dnsErr) {
		t.Errorf("unknown host: %v, want a *net.DNSError", err)
	}
	if _, err := g.DialContext(ctx, "tcp", "empty.test:80"); !errors.As(err, &dnsErr) {
		t.Errorf("empty answer: %v, want a *net.DNSError", err)
	}
	if _, err := g.DialContext(ctx, "tcp6", "example.test:80"); !errors.As(err, &dnsErr) {
		t.Errorf("tcp6 with only IPv4 answers: %v, want a *net.DNSError", err)
	}
	if d := rec.dialed(); len(d) != 0 {
		t.Fatalf("dialed %v", d)
	}
	_, _ = g.DialContext(ctx, "tcp4", "dual.test:80")
	_, err := g.DialContext(ctx, "tcp", "dual.test:80") // both fail: both tried, in order
	if !errors.Is(err, errGuardRecorded) {
		t.Fatalf("dual: %v", err)
	}
	want := []string{"93.184.216.34:80", "[2606:2800:220:1:248:1893:25c8:1946]:80", "93.184.216.34:80"}
	if d := rec.dialed(); strings.Join(d, " ") != strings.Join(want, " ") {
		t.Fatalf("dialed %v, want %v", d, want)
	}
}

func TestGuardClientConfig(t *testing.T) {
	g := NewGuard(GuardConfig{}, guardTestResolver(), (&guardRecorder{}).dial)
	c := g.Client(7 * time.Second)
	tr := c.Transport.(*http.Transport)
	switch {
	case c.Timeout != 7*time.Second:
		t.Errorf("Timeout %v", c.Timeout)
	case tr.Proxy != nil:
		t.Error("Proxy set: environment proxies would bypass the guard")
	case tr.DialContext == nil || tr.DialTLSContext != nil || tr.Dial != nil || tr.DialTLS != nil:
		t.Error("dialers")
	case tr.MaxResponseHeaderBytes != 16<<10 || !tr.DisableCompression || tr.ForceAttemptHTTP2:
		t.Error("limits")
	case tr.TLSHandshakeTimeout <= 0 || tr.ResponseHeaderTimeout <= 0 || tr.MaxIdleConnsPerHost <= 0:
		t.Error("timeouts")
	case c.CheckRedirect(nil, nil) != http.ErrUseLastResponse:
		t.Error("CheckRedirect follows redirects")
	}
}

// guardServer serves h on ip:0 (ip in 127.0.0.0/8) and counts accepted connections.
func guardServer(t *testing.T, ip string, h http.Handler) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Skipf("cannot listen on %s (needs all of 127.0.0.0/8 on lo, as on Linux): %v", ip, err)
	}
	return guardServe(t, ln, h)
}

func guardServe(t *testing.T, ln net.Listener, h http.Handler) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	if h == nil {
		h = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") })
	}
	srv := httptest.NewUnstartedServer(h)
	_ = srv.Listener.Close()
	srv.Listener = ln
	var n atomic.Int64
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			n.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, &n
}

func guardPort(t *testing.T, srv *httptest.Server) string {
	t.Helper()
	_, port, err := net.SplitHostPort(srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	return port
}

// guardGet GETs url and returns the response (body read and closed) or the error.
func guardGet(c *http.Client, url string) (*http.Response, string, error) {
	resp, err := c.Get(url)
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp, string(body), err
}

func wantForbiddenGet(t *testing.T, c *http.Client, url string) {
	t.Helper()
	_, _, err := guardGet(c, url)
	var ce *coffer.Error
	if !errors.As(err, &ce) || ce.Code != coffer.EFORBIDDEN {
		t.Errorf("GET %s: %v, want an EFORBIDDEN *coffer.Error", url, err)
	}
}

// TestGuardDecoy: a real server on 127.0.0.1 must see no connection at all.
func TestGuardDecoy(t *testing.T) {
	decoy, accepted := guardServer(t, "127.0.0.1", nil)
	port := guardPort(t, decoy)
	res := guardTestResolver().then("decoy.test", "127.0.0.1")
	g := NewGuard(GuardConfig{}, res, nil) // the real dialer, with its Control re-check
	c := g.Client(5 * time.Second)
	for _, host := range []string{"127.0.0.1", "localhost", "decoy.test", "[::ffff:127.0.0.1]", "2130706433", "0x7f.1", "127.1"} {
		wantForbiddenGet(t, c, "http://"+host+":"+port+"/")
	}
	// Last line of defence: the default dialer refuses loopback by itself.
	if conn, err := g.dial(context.Background(), "tcp", decoy.Listener.Addr().String()); err == nil {
		_ = conn.Close()
		t.Error("the default dialer's Control let 127.0.0.1 through")
	} else {
		wantCode(t, err, coffer.EFORBIDDEN)
	}
	if n := accepted.Load(); n != 0 {
		t.Fatalf("decoy accepted %d connections", n)
	}
	// The decoy is real: an allow-listed guard reaches it.
	open := NewGuard(GuardConfig{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}, res, nil)
	if _, body, err := guardGet(open.Client(5*time.Second), decoy.URL); err != nil || body != "ok" {
		t.Fatalf("allowed decoy: %q %v", body, err)
	}
	if accepted.Load() == 0 {
		t.Fatal("the decoy does not count connections")
	}
}

// TestGuardRedirectNotFollowed: an allowed server on 127.0.0.2 redirects to
// the decoy on 127.0.0.1; the client returns the 302 and the decoy sees nothing.
func TestGuardRedirectNotFollowed(t *testing.T) {
	decoy, accepted := guardServer(t, "127.0.0.1", nil)
	port := guardPort(t, decoy)
	targets := []string{"http://127.0.0.1:" + port + "/", "http://localhost:" + port + "/", "http://2130706433:" + port + "/"}
	var which atomic.Int64
	redirector, hits := guardServer(t, "127.0.0.2", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, targets[int(which.Load())%len(targets)], http.StatusFound)
	}))
	g := NewGuard(GuardConfig{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.2/32")}}, guardTestResolver(), nil)
	c := g.Client(5 * time.Second)
	for i, target := range targets {
		which.Store(int64(i))
		resp, _, err := guardGet(c, redirector.URL+"/hook")
		if err != nil || resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != target {
			t.Fatalf("redirect %d: %v %v, want the 302 to %s", i, resp, err, target)
		}
		// Even a client that follows redirects cannot get there: the dial is guarded.
		following := g.Client(5 * time.Second)
		following.CheckRedirect = nil
		wantForbiddenGet(t, following, redirector.URL+"/hook")
	}
	if hits.Load() == 0 {
		t.Fatal("the redirector was never reached")
	}
	if n := accepted.Load(); n != 0 {
		t.Fatalf("decoy accepted %d connections", n)
	}
}

// TestGuardAllowedLoopbackReachable shows the guard is not simply refusing
// everything: an allow-listed server on 127.0.0.2 answers, by IP and by name.
func TestGuardAllowedLoopbackReachable(t *testing.T) {
	srv, accepted := guardServer(t, "127.0.0.2", nil)
	port := guardPort(t, srv)
	res := guardTestResolver().then("allowed.test", "127.0.0.2")
	g := NewGuard(GuardConfig{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.2/32")}}, res, nil)
	for _, url := range []string{srv.URL, "http://allowed.test:" + port + "/"} {
		resp, body, err := guardGet(g.Client(5*time.Second), url)
		if err != nil || resp.StatusCode != http.StatusOK || body != "ok" {
			t.Fatalf("GET %s: %v %q %v", url, resp, body, err)
		}
	}
	before := accepted.Load()
	if before == 0 {
		t.Fatal("no connection counted")
	}
	strict := NewGuard(GuardConfig{}, res, nil)
	wantForbiddenGet(t, strict.Client(5*time.Second), srv.URL)
	if accepted.Load() != before {
		t.Fatal("a guard without Allow reached 127.0.0.2")
	}
}

// TestGuardRebindingReal: "rebind.test" answers the allowed 127.0.0.2 first,
// then 127.0.0.1 on the same port, where a decoy listens. The second
// delivery must be refused and the decoy must see nothing.
func TestGuardRebindingReal(t *testing.T) {
	allowedLn, decoyLn := guardListenPair(t)
	srv, _ := guardServe(t, allowedLn, nil)
	_, accepted := guardServe(t, decoyLn, nil)
	port := guardPort(t, srv)
	res := newGuardResolver(nil).then("rebind.test", "127.0.0.2").then("rebind.test", "127.0.0.1")
	g := NewGuard(GuardConfig{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.2/32")}}, res, nil)
	c := g.Client(5 * time.Second)
	c.Transport.(*http.Transport).DisableKeepAlives = true // every request resolves and dials again
	url := "http://rebind.test:" + port + "/"
	if _, body, err := guardGet(c, url); err != nil || body != "ok" {
		t.Fatalf("first GET: %q %v", body, err)
	}
	wantForbiddenGet(t, c, url)
	if n := accepted.Load(); n != 0 {
		t.Fatalf("decoy accepted %d connections", n)
	}
}

// guardListenPair listens on 127.0.0.2:P and 127.0.0.1:P for one free port P.
func guardListenPair(t *testing.T) (net.Listener, net.Listener) {
	t.Helper()
	for range 20 {
		a, err := net.Listen("tcp", "127.0.0.2:0")
		if err != nil {
			t.Skipf("cannot listen on 127.0.0.2: %v", err)
		}
		_, port, _ := net.SplitHostPort(a.Addr().String())
		b, err := net.Listen("tcp", "127.0.0.1:"+port)
		if err == nil {
			return a, b
		}
		_ = a.Close()
	}
	t.Skip("no port free on both 127.0.0.1 and 127.0.0.2")
	return nil, nil
}
