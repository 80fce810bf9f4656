package httpserve

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"
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

// SetReadDeadline skips only a call that repeats the deadline in force: a past
// deadline still stops a read after repeated "no deadline" calls, and clearing it
// afterwards lets reads go on (the order net/http's background read uses).
func TestConnReadDeadlines(t *testing.T) {
	bc, client := tcpPair(t)
	buf := make([]byte, 1)
	for _, step := range []struct {
		deadline time.Time
		timeout  bool
	}{
		{time.Time{}, false}, {time.Time{}, false}, {time.Unix(1, 0), true}, {time.Unix(1, 0), true},
		{time.Time{}, false}, {time.Now().Add(time.Hour), false}, {time.Now().Add(-time.Second), true},
		{time.Time{}, false},
	} {
		if err := bc.SetReadDeadline(step.deadline); err != nil {
			t.Fatal(err)
		}
		if !step.timeout {
			if _, err := client.Write([]byte{'x'}); err != nil {
				t.Fatal(err)
			}
		}
		_, err := bc.Read(buf)
		if got := errors.Is(err, os.ErrDeadlineExceeded); got != step.timeout {
			t.Fatalf("deadline %v: read error %v, want timeout %v", step.deadline, err, step.timeout)
		}
	}
	if err := bc.SetDeadline(time.Unix(1, 0)); err != nil {
		t.Fatal(err)
	}
	if err := bc.SetReadDeadline(time.Time{}); err != nil { // must not be skipped after SetDeadline
		t.Fatal(err)
	}
	if _, err := client.Write([]byte{'y'}); err != nil {
		t.Fatal(err)
	}
	if _, err := bc.Read(buf); err != nil || buf[0] != 'y' {
		t.Fatalf("after SetDeadline and clearing the read deadline: %q, %v", buf, err)
	}
}
