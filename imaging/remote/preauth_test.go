package remote

import (
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/coffer/coffer/imaging/imagingtest"
)

// TestSilentPeersLeaveRoomForServers: peers that connect and never send a byte
// (three times MaxConns of them, more than MaxHandshakes) keep no server out, whether
// they came before it from its own address or keep coming from another one while it
// connects; each is closed by the handshake deadline, and the server's connection
// outlives it.
func TestSilentPeersLeaveRoomForServers(t *testing.T) {
	for _, tc := range []struct {
		name, from string
		floods     int
	}{
		{"silent peers from the server's address, then the server", "127.0.0.1", 0},
		{"silent peers from another address, still coming as the server connects", "127.0.0.2", 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testListenConfig([]byte("s"))
			cfg.HandshakeTimeout = time.Second
			a, logs := listenInProcess(t, cfg, 1)
			silent, err := imagingtest.DialSilents(a.String(), tc.from, 3*cfg.MaxConns)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { imagingtest.CloseAll(silent) }()
			var floods []func() ([]*imagingtest.Silent, error)
			for range tc.floods { // as fast as they can: evicting the oldest alone would let them evict the server
				floods = append(floods, imagingtest.Flood(a.String(), tc.from, time.Microsecond))
			}
			if tc.floods > 0 {
				time.Sleep(50 * time.Millisecond) // under way, and on until the server is done
			}
			c, err := newCluster(t, "s", 1, a)
			if err != nil {
				t.Fatalf("a server with the secret, after %d silent peers: %v\n%s", len(silent), err, logs.String())
			}
			if err := transformAll(c, 1, "past the silent")[0]; err != nil {
				t.Fatal(err)
			}
			for _, stop := range floods {
				more, err := stop()
				silent = append(silent, more...)
				if err != nil || len(more) < 10 {
					t.Fatalf("a flood opened %d connections: %v", len(more), err)
				}
			}
			open := 0
			for _, s := range silent {
				if !s.ClosedWithin(cfg.HandshakeTimeout + time.Second) {
					open++
				}
			}
			if open > 0 {
				t.Errorf("%d of %d silent peers still connected past the handshake deadline (%v)", open, len(silent), cfg.HandshakeTimeout)
			}
			if err := transformAll(c, 1, "after the deadline")[0]; err != nil {
				t.Errorf("the server's connection, past the handshake deadline: %v", err)
			}
		})
	}
}

// MaxConns counts authenticated servers only: a silent peer does not take the one
// place, and a second server is refused once the first holds it.
func TestMaxConnsCountsServersOnly(t *testing.T) {
	cfg := testListenConfig([]byte("s"))
	cfg.MaxConns, cfg.MaxHandshakes = 1, 1
	a, logs := listenInProcess(t, cfg, 1)
	silent, err := imagingtest.DialSilent(a.String(), "")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Conn.Close()
	if _, err := newCluster(t, "s", 1, a); err != nil {
		t.Fatalf("the first server, with a silent peer connected: %v", err)
	}
	if _, err := newCluster(t, "s", 1, a); err == nil {
		t.Error("a second server connected beyond MaxConns 1")
	}
	if !strings.Contains(logs.String(), errTooMany.Error()) {
		t.Errorf("the refusal is not logged:\n%s", logs.String())
	}
}

func TestVictim(t *testing.T) {
	p := func(s string) *pending { return &pending{source: netip.MustParsePrefix(s)} }
	a, b, c := "127.0.0.1/32", "127.0.0.2/32", "2001:db8::/64"
	for _, tc := range []struct {
		sources []string // oldest first
		want    int
	}{
		{[]string{a}, 0},
		{[]string{a, b, c}, 0},       // a tie: the oldest
		{[]string{a, b, b}, 1},       // the oldest of the source holding most
		{[]string{c, a, b, a, b}, 1}, // a tie of a and b: a's oldest is older
		{[]string{a, c, c, b, c}, 1},
	} {
		var ps []*pending
		for _, s := range tc.sources {
			ps = append(ps, p(s))
		}
		if got := victim(ps); got != tc.want {
			t.Errorf("victim(%v) = %d, want %d", tc.sources, got, tc.want)
		}
	}
}

func TestSourceOf(t *testing.T) {
	for addr, want := range map[string]string{
		"127.0.0.1:9100":                 "127.0.0.1/32",
		"[::ffff:10.0.0.5]:1":            "10.0.0.5/32",
		"[2001:db8::1:2:3:4]:1":          "2001:db8::/64",
		"[2001:db8:0:1:ffff::9%eth0]:80": "2001:db8:0:1::/64",
	} {
		tcp := net.TCPAddrFromAddrPort(netip.MustParseAddrPort(addr))
		if got := sourceOf(tcp).String(); got != want {
			t.Errorf("sourceOf(%s) = %s, want %s", addr, got, want)
		}
	}
	if got := sourceOf(&net.UnixAddr{Name: "@x", Net: "unix"}); got.IsValid() {
		t.Errorf("sourceOf(a unix address) = %v, want the zero Prefix", got)
	}
}
