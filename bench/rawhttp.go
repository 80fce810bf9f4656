package bench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"
)

// rawConn is a minimal HTTP/1.1 keep-alive client connection for plain http, one per
// worker: no goroutines of its own and no allocation per request. net/http costs two
// goroutine hand-offs and dozens of allocations per request, which on a small machine
// takes CPU from the server under test; this client is what lets the generator keep
// up with wrk. It reads Content-Length, chunked and close-delimited bodies, 1xx interim
// responses, Connection: close and HTTP/1.0. rawGet and rawUpload send their requests
// on it.
type rawConn struct {
	addr    string
	timeout time.Duration
	ctx     context.Context
	conn    net.Conn
	br      *bufio.Reader
	stop    func() bool // unregisters the cancel hook of conn
	reused  bool
}

// rawGet GETs one URL over a rawConn with a prebuilt request, and retries once (like
// net/http) when a reused connection turns out to be closed before any byte of the
// answer arrived.
type rawGet struct {
	rawConn
	req []byte
}

// rawBufSize bounds a status or header line.
const rawBufSize = 16 << 10

// newRawGet prepares GET u (http only) with the given extra headers.
func newRawGet(ctx context.Context, u string, cred credentials, timeout time.Duration) (*rawGet, error) {
	addr, req, err := rawRequest(u, "", [][2]string{{"X-Hasura-Admin-Secret", cred.adminSecret}, {"Authorization", bearer(cred.token)}})
	if err != nil {
		return nil, err
	}
	return &rawGet{rawConn: rawConn{addr: addr, timeout: timeout, ctx: ctx}, req: req}, nil
}

// rawRequest builds the bytes of GET u (http only) with Host host (default: u's) and
// the headers of extra that have a value; addr is the host:port to dial.
func rawRequest(u, host string, extra [][2]string) (addr string, req []byte, err error) {
	pu, err := url.Parse(u)
	if err != nil {
		return "", nil, err
	}
	if pu.Scheme != "http" {
		return "", nil, fmt.Errorf("raw client: %s is not http", u)
	}
	addr = pu.Host
	if pu.Port() == "" {
		addr = net.JoinHostPort(pu.Hostname(), "80")
	}
	if host == "" {
		host = pu.Host
	}
	var b bytes.Buffer
	if strings.ContainsAny(host, "\r\n") {
		return "", nil, fmt.Errorf("Host holds a line break")
	}
	fmt.Fprintf(&b, "GET %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: coffer-bench\r\n", pu.RequestURI(), host)
	for _, h := range extra {
		if h[1] == "" {
			continue
		}
		if bytes.ContainsAny([]byte(h[1]), "\r\n") {
			return "", nil, fmt.Errorf("%s holds a line break", h[0])
		}
		fmt.Fprintf(&b, "%s: %s\r\n", h[0], h[1])
	}
	b.WriteString("\r\n")
	return addr, b.Bytes(), nil
}

func bearer(token string) string {
	if token == "" {
		return ""
	}
	return "Bearer " + token
}

func (g *rawGet) do(_ context.Context, w *workerState, start time.Time) outcome {
	o, retry := g.try(w, start)
	if retry {
		o, _ = g.try(w, start)
	}
	return o
}

// try sends the request once; retry says that a reused connection failed before
// the answer started, so the request may be sent again on a new one.
func (g *rawGet) try(w *workerState, start time.Time) (o outcome, retry bool) {
	status, body, retry, err := g.exchange(func(c net.Conn) error { _, err := c.Write(g.req); return err })
	if err != nil {
		return outcome{kind: classify(err), latency: time.Since(start)}, retry
	}
	o = outcome{status: status, kind: statusKind(status), ttfb: max(time.Since(start), 1)}
	o.bytes, err = g.readBody(body, w.buf)
	o.latency = max(time.Since(start), 1)
	if err != nil {
		o.kind = classify(err)
	}
	g.done(body, err)
	return o, false
}

// exchange dials if needed, sends a request with send and reads the answer's head.
// On an error the connection is closed, and retry says that it was a reused one that
// failed before the answer started (the request may be sent again on a new one).
func (g *rawConn) exchange(send func(net.Conn) error) (status int, body bodyInfo, retry bool, err error) {
	if g.conn == nil {
		if err := g.dial(); err != nil {
			return 0, body, false, err
		}
	}
	reused := g.reused
	_ = g.conn.SetDeadline(time.Now().Add(g.timeout))
	if err := send(g.conn); err != nil {
		g.close()
		return 0, body, reused, err
	}
	status, body, err = g.readHead()
	if err != nil {
		g.close()
		return 0, body, reused && body.fresh, err
	}
	return status, body, false, nil
}

// done keeps the connection for the next request unless reading the answer's body
// failed (err) or the answer ends the connection.
func (g *rawConn) done(body bodyInfo, err error) {
	if err != nil || body.close || !body.chunked && body.length < 0 {
		g.close()
	} else {
		g.reused = true
	}
}

func (g *rawConn) dial() error {
	d := net.Dialer{Timeout: min(g.timeout, 10*time.Second), KeepAlive: 30 * time.Second}
	c, err := d.DialContext(g.ctx, "tcp", g.addr)
	if err != nil {
		return err
	}
	g.conn, g.reused = c, false
	if g.br == nil {
		g.br = bufio.NewReaderSize(c, rawBufSize)
	} else {
		g.br.Reset(c)
	}
	// Cancelling the run unblocks a read or write in progress.
	g.stop = context.AfterFunc(g.ctx, func() { _ = c.SetDeadline(time.Unix(1, 0)) })
	return nil
}

func (g *rawConn) close() {
	if g.conn != nil {
		g.stop()
		g.conn.Close()
		g.conn = nil
	}
}

// bodyInfo says how the body of an answer is delimited.
type bodyInfo struct {
	length  int64 // -1: unknown (chunked or until close)
	chunked bool
	close   bool // the connection ends after this answer
	fresh   bool // readHead failed before reading any byte
}
