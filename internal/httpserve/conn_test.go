package httpserve

import (
	"bytes"
	"io"
	"net"
	"testing"
)

// tcpPair returns a Conn and the other end of its connection.
func tcpPair(t *testing.T) (*Conn, net.Conn) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c, err := Listener(ln).Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close(); c.Close() })
	return c.(*Conn), client
}

// Whatever the sizes and order of writes while holding, the bytes arrive complete
// and in order, and Write reports each call's own length.
func TestBatchConnWrites(t *testing.T) {
	for _, sizes := range [][]int{{300}, {4096, 100 << 10}, {100, 5}, {4096, 4096, 10}, {5000}, {0, 7}} {
		bc, client := tcpPair(t)
		var want bytes.Buffer
		bc.hold()
		for i, n := range sizes {
			p := bytes.Repeat([]byte{byte('a' + i)}, n)
			want.Write(p)
			if m, err := bc.Write(p); m != n || err != nil {
				t.Fatalf("%v: write %d: %d, %v", sizes, n, m, err)
			}
			if n > 0 {
				p[0] = 'X' // the caller may reuse its buffer at once
			}
		}
		if err := bc.release(); err != nil {
			t.Fatal(err)
		}
		bc.Close()
		got, err := io.ReadAll(client)
		if err != nil || !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("%v: got %d bytes (%v), want %d", sizes, len(got), err, want.Len())
		}
	}
}
