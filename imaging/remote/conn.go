package remote

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/coffer/coffer/imaging/remote/imagerpc"
)

// errConnEnded is why a connection to a listening worker ended.
var errConnEnded = errors.New("the connection to the image worker ended")

// netPeer is one connection to a coffer-imager listening on the network.
type netPeer struct {
	conn net.Conn
	addr string
}

// closeWrite half-closes the connection: the worker reads EOF, answers the requests
// it has and closes its side, which ends the worker's read loop here.
func (p *netPeer) closeWrite() {
	type closeWriter interface{ CloseWrite() error }
	if cw, ok := p.conn.(closeWriter); ok {
		if cw.CloseWrite() == nil {
			return
		}
	}
	p.conn.Close()
}

func (p *netPeer) kill()          { p.conn.Close() }
func (p *netPeer) wait() error    { p.conn.Close(); return errConnEnded }
func (p *netPeer) String() string { return p.addr }

// errNoPong is why a connection was closed whose worker did not answer a ping.
var errNoPong = errors.New("the image worker did not answer a ping")

// ping sends a Ping and waits up to timeout for its Pong: nil if it came,
// errNoPong if not, errConnEnded if the connection ended meanwhile.
func (w *worker) ping(timeout time.Duration) error {
	w.mu.Lock()
	w.lastPing++
	id := w.lastPing
	w.mu.Unlock()
	go w.fw.WriteFrame(&imagerpc.Frame{Id: id, Body: &imagerpc.Frame_Ping{Ping: &imagerpc.Ping{}}}) // may block: the timer still runs
	t := time.NewTimer(timeout)
	defer t.Stop()
	for {
		select {
		case got := <-w.pongs:
			if got == id {
				return nil
			}
		case <-t.C:
			return errNoPong
		case <-w.exited:
			return errConnEnded
		}
	}
}

// dialWorker connects to the worker at a (over TLS if a.TLS, with tlsConf), runs
// the handshake with secret and waits for the worker's Hello, all within
// cfg.StartTimeout. cfg gives the limits the results are checked against.
func dialWorker(ctx context.Context, a Addr, secret []byte, tlsConf *tls.Config, cfg Config, log *slog.Logger) (*worker, *imagerpc.Hello, error) {
	ctx, cancel := context.WithTimeout(ctx, cfg.StartTimeout)
	defer cancel()
	d := net.Dialer{KeepAlive: 15 * time.Second}
	conn, err := d.DialContext(ctx, "tcp", a.String())
	if err != nil {
		return nil, nil, err
	}
	deadline, _ := ctx.Deadline()
	conn.SetDeadline(deadline)
	if a.TLS {
		conf := tlsConf.Clone()
		if conf == nil {
			conf = &tls.Config{}
		}
		if conf.ServerName == "" {
			conf.ServerName = a.Host
		}
		conn = tls.Client(conn, conf)
	}
	if err := dialHandshake(conn, secret, rand.Reader); err != nil {
		conn.Close()
		return nil, nil, err
	}
	w := newWorker(&netPeer{conn: conn, addr: a.String()}, conn, cfg, log)
	fr := &frameReader{r: bufio.NewReaderSize(conn, ChunkSize)}
	hello, err := w.awaitHello(fr, cfg.StartTimeout)
	if err != nil {
		conn.Close()
		return nil, nil, fmt.Errorf("%s: %w", a, err)
	}
	conn.SetDeadline(time.Time{})
	w.pings = hello.GetPing()
	go w.readLoop(fr)
	return w, hello, nil
}
