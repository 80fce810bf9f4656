package clamd_test

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/coffer/coffer/virusscan"
	"github.com/coffer/coffer/virusscan/clamd"
	"github.com/coffer/coffer/virusscan/clamd/clamdtest"
)

func client(t *testing.T, addr string, timeout time.Duration) *clamd.Client {
	t.Helper()
	cfg := clamd.DefaultConfig()
	cfg.Addr = addr
	if timeout > 0 {
		cfg.Timeout = timeout
	}
	c, err := clamd.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// scanAll streams data in writes of step bytes and returns the verdict.
func scanAll(t *testing.T, c *clamd.Client, data []byte, step int) (virusscan.Verdict, error) {
	t.Helper()
	s, err := c.Begin(context.Background())
	if err != nil {
		return virusscan.Verdict{}, err
	}
	defer s.Close()
	for len(data) > 0 {
		n := min(step, len(data))
		if _, err := s.Write(data[:n]); err != nil {
			break // Finish reports why
		}
		data = data[n:]
	}
	return s.Finish()
}

func TestRealClamd(t *testing.T) {
	d := clamdtest.Start(t, clamdtest.Options{Unix: true})
	random := make([]byte, 3<<20+17)
	rand.Read(random)
	eicar := []byte(clamdtest.EICAR)
	for _, addr := range []string{d.Addr, "tcp://" + d.Addr, "unix:" + d.Socket} {
		c := client(t, addr, 0)
		if err := c.Ping(context.Background()); err != nil {
			t.Fatalf("%s: ping: %v", addr, err)
		}
		for _, tc := range []struct {
			name     string
			data     []byte
			step     int
			infected bool
		}{
			{"clean random 3 MiB, odd writes", random, 100_003, false},
			{"clean empty", nil, 1, false},
			{"EICAR in one write", []byte(clamdtest.EICAR), 1 << 20, true},
			{"EICAR one byte per chunk", eicar, 1, true},
			{"EICAR plus a byte is another file", []byte(clamdtest.EICAR + "x"), 7, false},
		} {
			v, err := scanAll(t, c, tc.data, tc.step)
			if err != nil {
				t.Fatalf("%s %s: %v", addr, tc.name, err)
			}
			if v.Infected != tc.infected || (tc.infected && v.Signature != clamdtest.Signature) {
				t.Errorf("%s %s: verdict %+v, want infected=%v", addr, tc.name, v, tc.infected)
			}
		}
	}
}

func TestSharedClamd(t *testing.T) {
	c := client(t, clamdtest.Addr(t), 0)
	v, err := scanAll(t, c, []byte(clamdtest.EICAR), 10)
	if err != nil || !v.Infected || v.Signature != clamdtest.Signature {
		t.Fatalf("EICAR: %+v, %v", v, err)
	}
}

func TestRealClamdSizeLimit(t *testing.T) {
	d := clamdtest.Start(t, clamdtest.Options{StreamMaxLength: "1M"})
	c := client(t, d.Addr, 10*time.Second)
	s, err := c.Begin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	chunk := make([]byte, 64<<10)
	var werr error
	for i := 0; i < 256 && werr == nil; i++ { // 16 MiB at most
		_, werr = s.Write(chunk)
	}
	_, ferr := s.Finish()
	if werr == nil {
		t.Log("clamd kept reading 16 MiB; the limit shows in Finish")
	}
	if !errors.Is(ferr, virusscan.ErrTooLarge) {
		t.Fatalf("Finish: %v, want ErrTooLarge (write error: %v)", ferr, werr)
	}
	// Just under the limit passes.
	v, err := scanAll(t, c, make([]byte, 1<<20-1), 64<<10)
	if err != nil || v.Infected {
		t.Fatalf("1 MiB - 1: %+v, %v", v, err)
	}
}

func TestClamdDown(t *testing.T) {
	c := client(t, clamdtest.FreeAddr(t), time.Second)
	if _, err := c.Begin(context.Background()); !errors.Is(err, virusscan.ErrUnavailable) {
		t.Fatalf("Begin: %v, want ErrUnavailable", err)
	}
	if err := c.Ping(context.Background()); !errors.Is(err, virusscan.ErrUnavailable) {
		t.Fatalf("Ping: %v, want ErrUnavailable", err)
	}
	// A clamd killed while a stream is open.
	d := clamdtest.Start(t, clamdtest.Options{})
	c = client(t, d.Addr, 2*time.Second)
	s, err := c.Begin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.Write([]byte("hello"))
	d.Stop()
	for i := 0; i < 100; i++ {
		if _, err := s.Write(make([]byte, 64<<10)); err != nil {
			break
		}
	}
	if _, err := s.Finish(); !errors.Is(err, virusscan.ErrUnavailable) {
		t.Fatalf("Finish after clamd died: %v, want ErrUnavailable", err)
	}
}

// fakeClamd serves one connection on loopback with fn.
func fakeClamd(t *testing.T, fn func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		defer conn.Close()
		fn(conn)
	}()
	t.Cleanup(func() { ln.Close(); <-done })
	return ln.Addr().String()
}

func readCommand(t *testing.T, conn net.Conn) {
	cmd := make([]byte, len("zINSTREAM\x00"))
	if _, err := io.ReadFull(conn, cmd); err != nil || string(cmd) != "zINSTREAM\x00" {
		t.Errorf("command %q, %v", cmd, err)
	}
}

// skipChunk reads one INSTREAM chunk and returns its length (0: the end).
func skipChunk(conn net.Conn) (int64, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(conn, hdr[:]); err != nil {
		return 0, err
	}
	n := int64(binary.BigEndian.Uint32(hdr[:]))
	_, err := io.CopyN(io.Discard, conn, n)
	return n, err
}

// A scanner that answers and closes before the end of the stream: the writer gets
// ErrVerdict, not a broken pipe, and Finish gives the verdict.
func TestEarlyVerdict(t *testing.T) {
	addr := fakeClamd(t, func(conn net.Conn) {
		readCommand(t, conn)
		skipChunk(conn)
		conn.Write([]byte("stream: Early.Sig FOUND\x00"))
		conn.(*net.TCPConn).SetLinger(0) // unread data makes the close a reset
	})
	c := client(t, addr, 5*time.Second)
	s, err := c.Begin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var werr error
	for i := 0; i < 4096 && werr == nil; i++ {
		_, werr = s.Write(make([]byte, 32<<10))
	}
	if !errors.Is(werr, virusscan.ErrVerdict) {
		t.Fatalf("Write: %v, want ErrVerdict", werr)
	}
	v, err := s.Finish()
	if err != nil || !v.Infected || v.Signature != "Early.Sig" {
		t.Fatalf("Finish: %+v, %v", v, err)
	}
}

// An "OK" sent before the stream ends is no verdict on the upload: only a reply to
// the zero-length chunk can accept it. Whether clamd keeps reading after its early
// "OK" (the client finds it waiting before it ends the stream) or closes on it (a
// failed write), Finish fails with ErrUnavailable, naming the early reply.
func TestEarlyOKIsNotAVerdict(t *testing.T) {
	for _, closeEarly := range []bool{false, true} {
		answered := make(chan struct{})
		addr := fakeClamd(t, func(conn net.Conn) {
			readCommand(t, conn)
			skipChunk(conn)
			conn.Write([]byte("stream: OK\x00"))
			close(answered)
			if closeEarly {
				conn.(*net.TCPConn).SetLinger(0) // unread data makes the close a reset
				return
			}
			for n, err := skipChunk(conn); err == nil && n > 0; n, err = skipChunk(conn) {
			} // read the rest, answer nothing more
		})
		c := client(t, addr, 5*time.Second)
		s, err := c.Begin(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		s.Write([]byte("first chunk"))
		<-answered
		var werr error
		for i := 0; i < 4096 && werr == nil && closeEarly; i++ {
			_, werr = s.Write(make([]byte, 32<<10))
		}
		s.Write([]byte("last chunk"))
		v, err := s.Finish()
		if !errors.Is(err, virusscan.ErrUnavailable) || !strings.Contains(err.Error(), "before the end of the stream") {
			t.Errorf("close=%v: Finish after an early OK: %+v, %v; want ErrUnavailable (write: %v)", closeEarly, v, err, werr)
		}
		s.Close()
	}
}

// A scanner that stops reading, or never answers, is a timeout: unavailable.
func TestTimeouts(t *testing.T) {
	stuck := fakeClamd(t, func(conn net.Conn) { time.Sleep(time.Second) })
	c := client(t, stuck, 300*time.Millisecond)
	s, err := c.Begin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var werr error
	for i := 0; i < 4096 && werr == nil; i++ {
		_, werr = s.Write(make([]byte, 64<<10))
	}
	if !errors.Is(werr, virusscan.ErrUnavailable) {
		t.Fatalf("Write to a clamd that does not read: %v, want ErrUnavailable", werr)
	}
	s.Close()

	silent := fakeClamd(t, func(conn net.Conn) {
		io.Copy(io.Discard, conn)
	})
	c = client(t, silent, 300*time.Millisecond)
	v, err := scanAll(t, c, []byte("data"), 10)
	if !errors.Is(err, virusscan.ErrUnavailable) || !strings.Contains(err.Error(), "verdict") {
		t.Fatalf("silent clamd: %+v, %v", v, err)
	}
}

func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		addr string
		ok   bool
	}{
		{"127.0.0.1:3310", true}, {"tcp://127.0.0.1:3310", true}, {"unix:/run/clamav/clamd.ctl", true},
		{"unix:///run/clamd.sock", true}, {"[::1]:3310", true},
		{"", false}, {"127.0.0.1", false}, {"unix:", false}, {"tcp://", false}, {"http://x:1", false},
	} {
		cfg := clamd.DefaultConfig()
		cfg.Addr = tc.addr
		if err := cfg.Validate(); (err == nil) != tc.ok {
			t.Errorf("Validate(%q) = %v, want ok=%v", tc.addr, err, tc.ok)
		}
	}
	cfg := clamd.DefaultConfig()
	cfg.Timeout = 0
	if cfg.Validate() == nil {
		t.Error("zero timeout accepted")
	}
	cfg = clamd.DefaultConfig()
	cfg.ChunkSize = 10
	if cfg.Validate() == nil {
		t.Error("10-byte chunks accepted")
	}
}
