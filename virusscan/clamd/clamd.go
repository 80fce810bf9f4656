// Package clamd is a client of ClamAV's daemon: uploads are streamed to it with the
// INSTREAM command (chunks framed by a 4-byte big-endian length, a zero-length chunk
// ends the stream) over TCP or a unix socket, as they arrive.
package clamd

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/virusscan"
)

// Config says where clamd listens and how long to wait for it.
type Config struct {
	// Addr is "host:port", "tcp://host:port" or "unix:/path/to/clamd.ctl".
	Addr string
	// Timeout bounds connecting, each write (clamd must keep reading) and the wait
	// for the verdict after the last byte (which includes clamd's scan).
	Timeout time.Duration
	// ChunkSize is the largest INSTREAM chunk; longer writes are split.
	ChunkSize int
}

// DefaultConfig returns clamd's default TCP address and a 2-minute timeout (clamd's
// own default MaxScanTime).
func DefaultConfig() Config {
	return Config{Addr: "127.0.0.1:3310", Timeout: 2 * time.Minute, ChunkSize: 256 << 10}
}

// Validate checks c.
func (c Config) Validate() error {
	if _, _, err := splitAddr(c.Addr); err != nil {
		return err
	}
	if c.Timeout <= 0 {
		return coffer.Errorf(coffer.EINVALID, "clamd timeout must be positive")
	}
	if c.ChunkSize < 1<<10 || c.ChunkSize > 16<<20 {
		return coffer.Errorf(coffer.EINVALID, "clamd chunk size must be between 1 KiB and 16 MiB")
	}
	return nil
}

// splitAddr returns the network and address to dial.
func splitAddr(addr string) (network, address string, err error) {
	switch {
	case strings.HasPrefix(addr, "unix://"):
		network, address = "unix", strings.TrimPrefix(addr, "unix://")
	case strings.HasPrefix(addr, "unix:"):
		network, address = "unix", strings.TrimPrefix(addr, "unix:")
	case strings.HasPrefix(addr, "tcp://"):
		network, address = "tcp", strings.TrimPrefix(addr, "tcp://")
	default:
		network, address = "tcp", addr
	}
	if network == "unix" && address != "" {
		return network, address, nil
	}
	if _, port, err := net.SplitHostPort(address); network == "tcp" && err == nil && port != "" {
		return network, address, nil
	}
	return "", "", coffer.Errorf(coffer.EINVALID, "clamd address %q: want host:port, tcp://host:port or unix:/path", addr)
}

// Client talks to one clamd. It holds no connection between scans: each scan dials.
type Client struct {
	cfg           Config
	network, addr string
}

var _ virusscan.Scanner = (*Client)(nil)

// New returns a client for cfg. It does not connect.
func New(cfg Config) (*Client, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	network, addr, _ := splitAddr(cfg.Addr)
	return &Client{cfg: cfg, network: network, addr: addr}, nil
}

func unavailable(format string, a ...any) error {
	return fmt.Errorf("%w: clamd: %s", virusscan.ErrUnavailable, fmt.Sprintf(format, a...))
}

func (c *Client) dial(ctx context.Context) (net.Conn, error) {
	d := net.Dialer{Timeout: c.cfg.Timeout}
	conn, err := d.DialContext(ctx, c.network, c.addr)
	if err != nil {
		return nil, unavailable("%v", err)
	}
	return conn, nil
}

// Ping sends PING and expects PONG.
func (c *Client) Ping(ctx context.Context) error {
	conn, err := c.dial(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	conn.SetDeadline(time.Now().Add(c.cfg.Timeout))
	if _, err := conn.Write([]byte("zPING\x00")); err != nil {
		return unavailable("ping: %v", err)
	}
	reply, err := readReply(conn)
	if err != nil {
		return unavailable("ping: %v", err)
	}
	if reply != "PONG" {
		return unavailable("ping: unexpected reply %q", reply)
	}
	return nil
}

// Begin connects and starts an INSTREAM scan.
func (c *Client) Begin(ctx context.Context) (virusscan.Stream, error) {
	conn, err := c.dial(ctx)
	if err != nil {
		return nil, err
	}
	s := &stream{c: c, conn: conn}
	s.stop = context.AfterFunc(ctx, func() { conn.SetDeadline(time.Unix(1, 0)) })
	conn.SetWriteDeadline(time.Now().Add(c.cfg.Timeout))
	if _, err := conn.Write([]byte("zINSTREAM\x00")); err != nil {
		s.Close()
		return nil, unavailable("INSTREAM: %v", err)
	}
	return s, nil
}

// stream is one INSTREAM session.
type stream struct {
	c       *Client
	conn    net.Conn
	stop    func() bool
	hdr     [4]byte
	iov     [2][]byte          // header and data of the chunk being written (no allocation per write)
	bufs    net.Buffers        // over iov
	err     error              // sticky: the first failure, or virusscan.ErrVerdict
	verdict *virusscan.Verdict // set once clamd answered
	vErr    error              // the error clamd answered instead of a verdict
	closed  bool
}

// Write sends p as one or more chunks. When clamd stops reading (it answered early,
// e.g. "INSTREAM size limit exceeded", or it found something), Write reads its answer
// and returns virusscan.ErrVerdict (or the error clamd answered): call Finish for it.
func (s *stream) Write(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	written := 0
	for len(p) > 0 {
		n := min(len(p), s.c.cfg.ChunkSize)
		binary.BigEndian.PutUint32(s.hdr[:], uint32(n))
		s.conn.SetWriteDeadline(time.Now().Add(s.c.cfg.Timeout))
		s.iov[0], s.iov[1] = s.hdr[:], p[:n]
		s.bufs = s.iov[:]
		_, err := s.bufs.WriteTo(s.conn)
		s.iov[1] = nil // do not keep the caller's buffer
		if err != nil {
			return written, s.failWrite(err)
		}
		written += n
		p = p[n:]
	}
	return written, nil
}

// failWrite handles a failed write: clamd may have answered and closed the
// connection, so its answer is read (briefly) before deciding what failed.
func (s *stream) failWrite(werr error) error {
	var ne net.Error
	if errors.As(werr, &ne) && ne.Timeout() {
		s.err = unavailable("write: %v", werr)
		return s.err
	}
	s.conn.SetReadDeadline(time.Now().Add(min(s.c.cfg.Timeout, 5*time.Second)))
	reply, rerr := readReply(s.conn)
	if rerr != nil && reply == "" {
		s.err = unavailable("write: %v", werr)
		return s.err
	}
	s.early(reply)
	if s.vErr != nil {
		s.err = s.vErr
	} else {
		s.err = virusscan.ErrVerdict
	}
	return s.err
}

// answer records clamd's reply to the whole stream.
func (s *stream) answer(reply string) {
	v, err := ParseReply(reply)
	if err != nil {
		s.vErr = err
		return
	}
	s.verdict = &v
}

// early records a reply clamd sent before the zero-length chunk that ends the
// stream. It can only refuse: a finding or an error stands, but "OK" is not a scan
// of the whole upload (only a verdict after the last chunk can accept it), so it is
// an error that wraps virusscan.ErrUnavailable.
func (s *stream) early(reply string) {
	s.answer(reply)
	if s.verdict != nil && !s.verdict.Infected {
		s.verdict = nil
		s.vErr = unavailable("answered %q before the end of the stream", clip(reply))
	}
}

// Finish ends the stream and waits for the verdict.
func (s *stream) Finish() (virusscan.Verdict, error) {
	defer s.Close()
	if s.verdict == nil && s.vErr == nil {
		if s.err != nil {
			return virusscan.Verdict{}, s.err
		}
		s.finish()
	}
	if s.vErr != nil {
		return virusscan.Verdict{}, s.vErr
	}
	return *s.verdict, nil
}

func (s *stream) finish() {
	if replied(s.conn) { // an answer to part of the stream
		s.conn.SetReadDeadline(time.Now().Add(s.c.cfg.Timeout))
		reply, _ := readReply(s.conn)
		s.early(reply)
		return
	}
	s.conn.SetWriteDeadline(time.Now().Add(s.c.cfg.Timeout))
	_, werr := s.conn.Write([]byte{0, 0, 0, 0})
	if werr != nil {
		s.failWrite(werr)
		if s.verdict == nil && s.vErr == nil {
			s.vErr = s.err
		}
		return
	}
	s.conn.SetReadDeadline(time.Now().Add(s.c.cfg.Timeout))
	reply, err := readReply(s.conn)
	if err != nil && reply == "" {
		s.vErr = unavailable("waiting for the verdict: %v", err)
		return
	}
	s.answer(reply)
}

// Close releases the connection.
func (s *stream) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	s.stop()
	return s.conn.Close()
}

// maxReply bounds what is read of one reply.
const maxReply = 4 << 10

// readReply reads one NUL-terminated reply (or up to EOF), at most maxReply bytes.
func readReply(r io.Reader) (string, error) {
	buf := make([]byte, 0, 128)
	var tmp [128]byte
	for len(buf) < maxReply {
		n, err := r.Read(tmp[:])
		buf = append(buf, tmp[:n]...)
		if i := strings.IndexByte(string(buf), 0); i >= 0 {
			return string(buf[:i]), nil
		}
		if err != nil {
			if errors.Is(err, io.EOF) && len(buf) > 0 {
				return string(buf), nil
			}
			return string(buf), err
		}
	}
	return string(buf), fmt.Errorf("reply longer than %d bytes", maxReply)
}
