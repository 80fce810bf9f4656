package rpcapi

import (
	"bytes"
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

// TestConnUsage: a caller is refused past its connection's budget, and the budget
// refills at its rate; another caller on the connection is counted apart.
func TestConnUsage(t *testing.T) {
	b := Budget{ConnMessages: 10, ConnBytes: 1000, ConnWindow: time.Second}
	u := &connUsage{}
	if !u.add(b, "", 10, 1000) || u.add(b, "", 1, 0) {
		t.Fatal("the budget is not 10 messages")
	}
	if !u.add(b, "user\x00u1", 10, 1000) {
		t.Fatal("another caller was refused")
	}
	u.by[""].at = u.by[""].at.Add(-time.Second) // a window later
	if !u.add(b, "", 9, 999) || u.add(b, "", 0, 500) {
		t.Fatal("the budget did not refill once")
	}
	for i := range 2 * maxCallers {
		u.add(b, strconv.Itoa(i), 1, 0)
	}
	if len(u.by) != maxCallers+1 {
		t.Fatalf("%d callers counted apart", len(u.by))
	}
}
