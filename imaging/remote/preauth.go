package remote

import (
	"errors"
	"net"
	"net/netip"
	"time"
)

// The connections a listening worker holds before they authenticate. They do not
// count against ListenConfig.MaxConns, which only authenticated servers fill, but
// against their own small budget, ListenConfig.MaxHandshakes, each for at most
// HandshakeTimeout. When that budget is full a new connection is still admitted:
// it takes the place of the oldest connection of the source that holds the most
// places (an IPv4 address or an IPv6 /64; with every source holding as many, the
// oldest connection overall).
//
// Why evict an old connection rather than refuse the newcomer: refusing it lets
// anyone who keeps MaxHandshakes silent connections open (reopening each one the
// deadline closes, MaxHandshakes/HandshakeTimeout connections a second) lock every
// server out for as long as they like. Evicted, a silent connection loses nothing,
// while a server's connection is admitted at once and lives until its handshake
// completes (a few round trips) unless MaxHandshakes newer connections from its own
// source arrive first: a flood from any other source evicts its own connections.

// Limits of ListenConfig's handshake fields: the budget is meant to be small (its
// connections are scanned on each eviction) and the deadline short.
const (
	MaxHandshakesLimit    = 1024
	HandshakeTimeoutLimit = time.Minute
)

// Why a connection was closed around its handshake, for the worker's log.
var (
	errEvicted  = errors.New("closed in its handshake to admit a newer connection (MaxHandshakes connections in their handshake at once)")
	errTooMany  = errors.New("authenticated, but MaxConns servers are connected")
	errStopping = errors.New("authenticated, but the worker is stopping")
)

// pending is a connection in its handshake.
type pending struct {
	conn    net.Conn
	source  netip.Prefix // whose budget it uses: see sourceOf
	evicted bool         // guarded by listener.mu
}

// sourceOf is the source a connection from addr is counted against: its IPv4
// address, or the /64 of its IPv6 address (one host often holds a whole /64); the
// zero Prefix for an address that is not IP.
func sourceOf(addr net.Addr) netip.Prefix {
	tcp, ok := addr.(*net.TCPAddr)
	if !ok {
		return netip.Prefix{}
	}
	ip := tcp.AddrPort().Addr().Unmap().WithZone("")
	bits := 32
	if ip.Is6() {
		bits = 64
	}
	p, _ := ip.Prefix(bits)
	return p
}

// victim returns the index in ps (oldest first) of the connection to evict: the
// oldest of the source holding the most, of the one whose oldest is oldest on a tie.
func victim(ps []*pending) int {
	count := make(map[netip.Prefix]int, len(ps))
	for _, p := range ps {
		count[p.source]++
	}
	best := 0
	for i, p := range ps {
		if count[p.source] > count[ps[best].source] {
			best = i
		}
	}
	return best
}
