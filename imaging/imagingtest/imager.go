package imagingtest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"sync"
	"time"
)

// Silent is a TCP connection to a worker that never sends a byte: a peer holding a
// place in the worker's handshake budget. It reads and discards what the worker
// sends and notes when the worker closes it.
type Silent struct {
	Conn     net.Conn
	Opened   time.Time
	closed   chan struct{}
	closedAt time.Time // set before closed is closed
}

// DialSilent opens a silent connection to addr ("127.0.0.1:9100") from the local
// IP from ("" = the kernel's choice; any 127.x.y.z works on Linux's loopback).
func DialSilent(addr, from string) (*Silent, error) {
	d := net.Dialer{Timeout: 5 * time.Second}
	if from != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(from)}
	}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	s := &Silent{Conn: c, Opened: time.Now(), closed: make(chan struct{})}
	go func() {
		io.Copy(io.Discard, c)
		s.closedAt = time.Now()
		close(s.closed)
		c.Close() // a flood's descriptors do not pile up
	}()
	return s, nil
}

// ClosedWithin says whether the worker closed s within d of its opening, waiting
// until then if it has not yet.
func (s *Silent) ClosedWithin(d time.Duration) bool {
	select {
	case <-s.closed:
	case <-time.After(time.Until(s.Opened.Add(d))):
		select {
		case <-s.closed:
		default:
			return false
		}
	}
	return s.closedAt.Sub(s.Opened) <= d
}

// DialSilents opens n silent connections to addr from the local IP from.
func DialSilents(addr, from string, n int) ([]*Silent, error) {
	var out []*Silent
	for range n {
		s, err := DialSilent(addr, from)
		if err != nil {
			CloseAll(out)
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// Flood opens silent connections to addr from the local IP from, one every gap,
// until stop is called; stop returns them (open on this side: CloseAll them) and
// the first dial error, if any ended the flood early.
func Flood(addr, from string, gap time.Duration) (stop func() ([]*Silent, error)) {
	var (
		mu   sync.Mutex
		out  []*Silent
		ferr error
	)
	done, ended := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(ended)
		t := time.NewTicker(gap)
		defer t.Stop()
		for {
			s, err := DialSilent(addr, from)
			mu.Lock()
			if err != nil {
				ferr = err
			} else {
				out = append(out, s)
			}
			mu.Unlock()
			if err != nil {
				return
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() ([]*Silent, error) {
		close(done)
		<-ended
		mu.Lock()
		defer mu.Unlock()
		return out, ferr
	}
}

// CloseAll closes this side of every connection of ss.
func CloseAll(ss []*Silent) {
	for _, s := range ss {
		s.Conn.Close()
	}
}

// Imager is a coffer-imager started with --listen by StartImager.
type Imager struct {
	Cmd  *exec.Cmd
	Addr string // the address it listens on, host:port
	mu   sync.Mutex
	logs bytes.Buffer  // its stderr (JSON lines), up to maxImagerLog bytes
	done chan struct{} // closed once it exited and its stderr is read
}

// maxImagerLog bounds the stderr an Imager keeps.
const maxImagerLog = 4 << 20

// StartImager runs the coffer-imager at path with --listen on a loopback port the
// system chooses, one worker, env added to this process's and args, and returns
// it once it logged its address; Stop it.
func StartImager(path string, env []string, args ...string) (*Imager, error) {
	cmd := exec.Command(path, append([]string{"--listen", "127.0.0.1:0", "--workers", "1"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	im := &Imager{Cmd: cmd, done: make(chan struct{})}
	listening := make(chan string, 1)
	go im.read(stderr, listening)
	select {
	case im.Addr = <-listening:
		return im, nil
	case <-im.done:
		return nil, fmt.Errorf("coffer-imager exited before it listened:\n%s", im.Logs())
	case <-time.After(30 * time.Second):
		im.Stop()
		return nil, fmt.Errorf("coffer-imager did not listen within 30 s:\n%s", im.Logs())
	}
}

// read keeps the imager's log, sends the address of its "listening for servers"
// line, and waits for the process once its stderr closed.
func (im *Imager) read(r io.Reader, listening chan<- string) {
	defer close(im.done)
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		var rec struct{ Msg, Addr string }
		if json.Unmarshal(sc.Bytes(), &rec) == nil && rec.Msg == "listening for servers" {
			listening <- rec.Addr
		}
		im.mu.Lock()
		if im.logs.Len() < maxImagerLog {
			im.logs.Write(append(sc.Bytes(), '\n'))
		}
		im.mu.Unlock()
	}
	im.Cmd.Wait()
}

// Logs returns what the imager logged so far.
func (im *Imager) Logs() string { im.mu.Lock(); defer im.mu.Unlock(); return im.logs.String() }

// Exited says whether the imager process ended.
func (im *Imager) Exited() bool {
	select {
	case <-im.done:
		return true
	default:
		return false
	}
}

// Stop kills the imager and waits for it.
func (im *Imager) Stop() { im.Cmd.Process.Kill(); <-im.done }
