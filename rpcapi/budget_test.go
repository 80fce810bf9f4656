package rpcapi

import (
	"bytes"
	"net"
	"net/netip"
	"strconv"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	reflectionv1 "github.com/coffer/coffer/proto/gen/grpc/reflection/v1"
)

// TestStamp: the codec's stamp comes off whole, leaving a message's own unknown
// fields as they were; a message without one counts 0.
func TestStamp(t *testing.T) {
	for _, own := range [][]byte{nil, {0xf8, 0x01, 0x07}} { // none; field 31 varint 7
		m := &reflectionv1.ServerReflectionRequest{Host: "h"}
		m.ProtoReflect().SetUnknown(own)
		want := proto.Clone(m)
		stamp(m, 12345)
		if n := unstamp(m); n != 12345 || !proto.Equal(m, want) || !bytes.Equal(m.ProtoReflect().GetUnknown(), own) {
			t.Errorf("unknown %x: %d, %v", own, n, m)
		}
		if n := unstamp(m); n != 0 || !proto.Equal(m, want) {
			t.Errorf("unknown %x, no stamp: %d, %v", own, n, m)
		}
	}
}

// TestUsages: a caller is refused past its budget, which refills at its rate;
// another caller is counted apart. Past max callers, a new one gets a bucket of its
// own: the buckets that leaked empty go first, else the one used longest ago, never
// the anonymous callers' (the zero key).
func TestUsages(t *testing.T) {
	r := rate{msgs: 10, bytes: 1000, window: time.Second}
	u := &usages[string]{max: 4}
	if !u.add(r, "", 10, 1000) || u.add(r, "", 1, 0) {
		t.Fatal("the budget is not 10 messages")
	}
	if !u.add(r, "a\x00user\x00u1", 10, 1000) {
		t.Fatal("another caller was refused")
	}
	u.by[""].at = u.by[""].at.Add(-time.Second) // a window later
	if !u.add(r, "", 9, 999) || u.add(r, "", 0, 500) {
		t.Fatal("the budget did not refill once")
	}
	// Full: "", the exhausted u1, and two more, exhausted too.
	for i, k := range []string{"x", "y"} {
		u.add(r, k, 11, 0)
		u.by[k].at = u.by[k].at.Add(-time.Duration(i+1) * time.Millisecond) // y is the oldest
	}
	if !u.add(r, "new", 1, 0) || u.by["y"] != nil || u.by[""] == nil || len(u.by) != 4 {
		t.Fatalf("a caller past max: %v", u.by)
	}
	u.by["x"].at = u.by["x"].at.Add(-2 * time.Second) // leaked empty
	if !u.add(r, "newer", 10, 0) || u.by["x"] != nil || u.by["a\x00user\x00u1"] == nil || len(u.by) != 4 {
		t.Fatalf("a caller past max, with one empty: %v", u.by)
	}
	for i := range 100 {
		if !u.add(r, strconv.Itoa(i), 10, 0) || u.by[""] == nil || len(u.by) > 4 {
			t.Fatalf("caller %d: refused, or %d callers", i, len(u.by))
		}
	}
}

// TestSourceOf: anonymous calls count at the peer's IPv4 address or IPv6 /64.
func TestSourceOf(t *testing.T) {
	for addr, want := range map[string]string{
		"127.0.0.1:5000": "127.0.0.1/32", "[::ffff:10.1.2.3]:1": "10.1.2.3/32",
		"[2001:db8:1:2:3:4:5:6]:443": "2001:db8:1:2::/64", "[fe80::1%eth0]:80": "fe80::/64", "@": "invalid Prefix",
	} {
		var a net.Addr = &net.UnixAddr{Name: addr}
		if ap, err := netip.ParseAddrPort(addr); err == nil {
			a = net.TCPAddrFromAddrPort(ap)
		}
		if got := sourceOf(a).String(); got != want {
			t.Errorf("%s: %s, want %s", addr, got, want)
		}
	}
}
