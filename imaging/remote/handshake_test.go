package remote

import (
	"bytes"
	"crypto/rand"
	"io"
	"net"
	"testing"
)

// scripted is one side of a handshake whose peer's bytes are fixed: reads come from
// in, writes are recorded.
type scripted struct {
	in  *bytes.Reader
	out bytes.Buffer
}

func (s *scripted) Read(p []byte) (int, error)  { return s.in.Read(p) }
func (s *scripted) Write(p []byte) (int, error) { return s.out.Write(p) }

// zeros is a nonce source of zero bytes, so a fuzzer's input meets fixed nonces.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

func TestHandshakeRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		worker, server string
		ok             bool
	}{{"k", "k", true}, {"", "", true}, {"k", "K", false}, {"k", "", false}, {"", "k", false}} {
		a, b := net.Pipe()
		errc := make(chan error, 1)
		go func() { errc <- acceptHandshake(a, []byte(tc.worker), rand.Reader); a.Close() }()
		derr := dialHandshake(b, []byte(tc.server), rand.Reader)
		b.Close()
		werr := <-errc
		if (derr == nil) != tc.ok || (werr == nil) != tc.ok {
			t.Errorf("worker %q server %q: dial %v, accept %v; want ok=%v", tc.worker, tc.server, derr, werr, tc.ok)
		}
	}
}

// FuzzHandshake plays a peer sending arbitrary bytes to each side of the handshake:
// neither side may accept anything but the one proof the fixed nonces and key allow,
// and the worker never reads beyond the fixed-size proof.
func FuzzHandshake(f *testing.F) {
	key := []byte("fuzz-key")
	valid := append(make([]byte, nonceSize), handshakeMAC(key, "server", make([]byte, nonceSize), make([]byte, nonceSize))...)
	f.Add(valid)
	f.Add([]byte(handshakeMagic + string(make([]byte, nonceSize))))
	f.Add([]byte{0, 0x10, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		w := &scripted{in: bytes.NewReader(data)}
		err := acceptHandshake(w, key, zeros{})
		if read := len(data) - w.in.Len(); read > proofSize {
			t.Fatalf("worker read %d bytes", read)
		}
		if (err == nil) != (len(data) >= proofSize && bytes.Equal(data[:proofSize], valid)) {
			t.Fatalf("worker accepted=%v for %x", err == nil, data)
		}
		s := &scripted{in: bytes.NewReader(data)}
		if err := dialHandshake(s, key, zeros{}); err == nil {
			nonce, perr := parseChallenge(data[:challengeSize])
			want := handshakeMAC(key, "worker", make([]byte, nonceSize), nonce)
			if perr != nil || !bytes.Equal(data[challengeSize:challengeSize+macSize], want) {
				t.Fatalf("server accepted a worker without the key: %x", data)
			}
		}
	})
}

var _ io.ReadWriter = (*scripted)(nil)
