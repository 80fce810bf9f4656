package remote

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/imaging"
	"github.com/coffer/coffer/imaging/remote/imagerpc"
)

// fakeListenEnv makes the fake worker process listen on loopback with this secret
// instead of serving its stdin, and print its port on stdout.
const fakeListenEnv = "COFFER_REMOTE_FAKE_LISTEN_SECRET"

// listenFake serves e on a loopback port until killed.
func listenFake(e imaging.Engine, log *slog.Logger) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println(ln.Addr().(*net.TCPAddr).Port)
	cfg := testListenConfig([]byte(os.Getenv(fakeListenEnv)))
	cfg.Log = log
	if err := ServeListener(context.Background(), ln, e, cfg); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

func testListenConfig(secret []byte) ListenConfig {
	return ListenConfig{Secret: secret, MaxConns: 8, MaxHandshakes: 4, MaxRequests: 64, HandshakeTimeout: 2 * time.Second, MaxSource: 8 << 20}
}

// logBuffer is a goroutine-safe log sink.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}
func (l *logBuffer) String() string { l.mu.Lock(); defer l.mu.Unlock(); return l.b.String() }

// listenInProcess serves a fakeEngine of `workers` on a loopback port of this process
// until the test ends, and returns its address and its log.
func listenInProcess(t *testing.T, cfg ListenConfig, workers int) (Addr, *logBuffer) {
	t.Helper()
	return listenUntil(t, context.Background(), cfg, workers)
}

// listenUntil is listenInProcess stopping when ctx ends.
func listenUntil(t *testing.T, ctx context.Context, cfg ListenConfig, workers int) (Addr, *logBuffer) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	logs := &logBuffer{}
	cfg.Log = slog.New(slog.NewTextHandler(logs, nil))
	ic := imaging.DefaultConfig()
	ic.MaxSourceBytes = 8 << 20
	e := &fakeEngine{cfg: ic, pool: imaging.NewPool(workers, 1024)}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- ServeListener(ctx, ln, e, cfg) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("ServeListener: %v", err)
		}
	})
	return Addr{Host: "127.0.0.1", Port: ln.Addr().(*net.TCPAddr).Port}, logs
}

// listenProcess starts this test binary as a fake worker listening on loopback, and
// returns its address and process (killed when the test ends).
func listenProcess(t *testing.T, secret string, workers int) (Addr, *os.Process) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "--workers", strconv.Itoa(workers), "--max-bytes", strconv.Itoa(8<<20))
	cmd.Env = append(os.Environ(), fakeWorkerEnv+"=1", fakeListenEnv+"="+secret)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	port, perr := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || perr != nil {
		t.Fatalf("fake worker did not print its port: %q %v", line, err)
	}
	return Addr{Host: "127.0.0.1", Port: port}, cmd.Process
}

// newCluster returns a Cluster over addrs with secret, `workers` transformations at
// once, closed when the test ends.
func newCluster(t *testing.T, secret string, workers int, addrs ...Addr) (*Cluster, error) {
	t.Helper()
	wc := DefaultConfig("unused")
	wc.Imaging.Workers, wc.Imaging.Queue, wc.Imaging.MaxSourceBytes = workers, 64, 8<<20
	wc.StartTimeout, wc.RestartBackoff, wc.MaxRestartBackoff = 2*time.Second, 50*time.Millisecond, 200*time.Millisecond
	c, err := NewCluster(ClusterConfig{Worker: wc, Addrs: addrs, Secret: []byte(secret), Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err == nil {
		t.Cleanup(func() { c.Close() })
	}
	return c, err
}

// transformAll runs n transformations of src at once and returns their errors.
func transformAll(c *Cluster, n int, src string) []error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := c.Transform(context.Background(), strings.NewReader(src), opts)
			if err == nil && string(res.Data) != reverse(src) {
				err = fmt.Errorf("wrong result %q", res.Data)
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	return errs
}

func reverse(s string) string {
	b := []byte(s)
	for i, j := 0, len(b)-1; i < j; i, j = i+1, j-1 {
		b[i], b[j] = b[j], b[i]
	}
	return string(b)
}

func TestClusterSpreadsAcrossWorkers(t *testing.T) {
	a1, _ := listenInProcess(t, testListenConfig([]byte("s3cret")), 2)
	a2, _ := listenInProcess(t, testListenConfig([]byte("s3cret")), 2)
	c, err := newCluster(t, "s3cret", 4, a1, a2)
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range transformAll(c, 40, "sleep:10ms") {
		if err != nil {
			t.Fatal(err)
		}
	}
	states := c.Workers()
	for _, s := range states {
		t.Logf("worker %s: %d transformations", s.Addr, s.Transforms)
		if !s.Healthy || s.Transforms < 10 || s.InFlight != 0 {
			t.Errorf("worker state %+v: want healthy, at least 10 of 40 transformations, none in flight", s)
		}
	}
	if !c.Supports(imaging.JPEG) || c.Supports(imaging.WebP) {
		t.Errorf("formats: the fake workers write jpeg and png only")
	}
}

func TestClusterWorkerKilledMidLoad(t *testing.T) {
	a1, p1 := listenProcess(t, "s3cret", 2)
	a2, _ := listenProcess(t, "s3cret", 2)
	c, err := newCluster(t, "s3cret", 4, a1, a2)
	if err != nil {
		t.Fatal(err)
	}
	// Four run at once, two on each worker, for 300 ms: the kill lands among them.
	time.AfterFunc(100*time.Millisecond, func() { p1.Kill() })
	var ok, unavailable int
	for round := range 3 {
		src := "sleep:300ms"
		if round > 0 {
			src = "sleep:40ms"
		}
		for _, err := range transformAll(c, 8, src) {
			switch {
			case err == nil:
				ok++
			case codeOf(err) == coffer.EUNAVAILABLE:
				unavailable++
			default:
				t.Fatalf("error %v (code %s): want success or EUNAVAILABLE only", err, codeOf(err))
			}
		}
	}
	t.Logf("%d answered, %d EUNAVAILABLE; workers %+v", ok, unavailable, c.Workers())
	if unavailable == 0 {
		t.Error("no request saw the worker die: the kill came too late")
	}
	for _, err := range transformAll(c, 8, "after") {
		if err != nil {
			t.Errorf("after the kill the other worker must answer: %v", err)
		}
	}
	s := c.Workers()
	if s[0].Healthy || s[0].Failures == 0 || s[0].LastError == "" || !s[1].Healthy {
		t.Errorf("states %+v: want the first down with its failure, the second healthy", s)
	}
}

// A request whose worker turned out gone before it was sent goes to another worker.
func TestClusterResendsWhatDidNotLeave(t *testing.T) {
	a1, _ := listenInProcess(t, testListenConfig([]byte("s")), 1)
	a2, _ := listenInProcess(t, testListenConfig([]byte("s")), 1)
	c, err := newCluster(t, "s", 2, a1, a2)
	if err != nil {
		t.Fatal(err)
	}
	w, _ := c.workers[0].state()
	w.mu.Lock()
	w.calls = nil // as after the connection broke, before its read loop marked it broken
	w.mu.Unlock()
	for i := range 6 {
		if _, err := c.Transform(context.Background(), strings.NewReader("x"), opts); err != nil {
			t.Fatalf("transformation %d: %v", i, err)
		}
	}
	if s := c.Workers(); s[0].Transforms != 0 || s[1].Transforms != 6 {
		t.Errorf("states %+v: want all 6 on the second worker", s)
	}
}

func TestClusterAllWorkersGone(t *testing.T) {
	a1, p1 := listenProcess(t, "s3cret", 1)
	c, err := newCluster(t, "s3cret", 2, a1)
	if err != nil {
		t.Fatal(err)
	}
	p1.Kill()
	p1.Wait()
	for deadline := time.Now().Add(2 * time.Second); c.Workers()[0].Healthy && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	_, err = c.Transform(context.Background(), strings.NewReader("x"), opts)
	var rl *imaging.RetryLater
	if codeOf(err) != coffer.EUNAVAILABLE || !errors.As(err, &rl) || rl.After < time.Second {
		t.Errorf("with no worker: %v, want EUNAVAILABLE with Retry-After", err)
	}
}

// A stopping worker answers the requests it holds and refuses new ones with 503.
func TestListenerDrains(t *testing.T) {
	ctx, stop := context.WithCancel(context.Background())
	cfg := testListenConfig([]byte("s"))
	cfg.DrainTimeout = 5 * time.Second
	a, _ := listenUntil(t, ctx, cfg, 2)
	c, err := newCluster(t, "s", 4, a)
	if err != nil {
		t.Fatal(err)
	}
	running := make(chan error, 1)
	go func() {
		_, err := c.Transform(context.Background(), strings.NewReader("sleep:1s"), opts)
		running <- err
	}()
	for c.Workers()[0].InFlight == 0 {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond) // the worker got it
	stop()
	time.Sleep(200 * time.Millisecond) // it drains
	if _, err := c.Transform(context.Background(), strings.NewReader("late"), opts); codeOf(err) != coffer.EUNAVAILABLE {
		t.Errorf("request while draining: %v, want EUNAVAILABLE", err)
	}
	if err := <-running; err != nil {
		t.Errorf("request held when the worker stopped: %v, want its answer", err)
	}
}

func TestClusterBadSecretRefused(t *testing.T) {
	a, logs := listenInProcess(t, testListenConfig([]byte("right")), 1)
	if _, err := newCluster(t, "wrong", 1, a); err == nil || !strings.Contains(err.Error(), "no image worker answered") {
		t.Fatalf("NewCluster with a wrong secret: %v, want an error", err)
	}
	if _, err := newCluster(t, "", 1, a); err == nil {
		t.Fatal("NewCluster without a secret connected to a worker that has one")
	}
	if got := logs.String(); strings.Count(got, "refused an unauthenticated connection") < 2 {
		t.Errorf("the worker did not log the refusals:\n%s", got)
	}
}

func TestWorkerBusyBeyondMaxRequests(t *testing.T) {
	cfg := testListenConfig([]byte("s"))
	cfg.MaxRequests = 1
	a, _ := listenInProcess(t, cfg, 1)
	c, err := newCluster(t, "s", 4, a)
	if err != nil {
		t.Fatal(err)
	}
	var busy int
	for _, err := range transformAll(c, 4, "sleep:1s") {
		var rl *imaging.RetryLater
		if errors.As(err, &rl) && codeOf(err) == coffer.EUNAVAILABLE {
			busy++
		} else if err != nil {
			t.Errorf("unexpected error %v", err)
		}
	}
	if busy != 3 {
		t.Errorf("%d of 4 requests were refused as busy, want 3 (MaxRequests 1)", busy)
	}
}

// TestGarbageBeforeHandshake sends frame headers announcing MaxFrame bytes, and
// garbage, from peers that never proved the secret: the worker must close them
// having read no frame, so it allocates far less than one MaxFrame buffer each.
func TestGarbageBeforeHandshake(t *testing.T) {
	a, logs := listenInProcess(t, testListenConfig([]byte("s")), 1)
	var before, after runtimeMem
	before.read()
	const peers = 20
	for range peers {
		conn, err := net.Dial("tcp", a.String())
		if err != nil {
			t.Fatal(err)
		}
		msg := bytes.Repeat([]byte{0, 0x10, 0, 0}, proofSize/4) // MaxFrame-sized length prefixes in place of a proof
		conn.Write(msg)
		conn.SetReadDeadline(time.Now().Add(2 * time.Second))
		got, err := io.ReadAll(conn)
		conn.Close()
		if err != nil || len(got) != challengeSize {
			t.Fatalf("worker answered %d bytes (%v), want its %d-byte challenge then the connection closed", len(got), err, challengeSize)
		}
	}
	after.read()
	if grew := after.total - before.total; grew > peers*MaxFrame/4 {
		t.Errorf("the worker allocated %d bytes for %d unauthenticated peers", grew, peers)
	}
	if strings.Count(logs.String(), "refused an unauthenticated connection") != peers {
		t.Errorf("want %d refusals logged:\n%s", peers, logs.String())
	}
}

// runtimeMem is the process's cumulative heap allocation.
type runtimeMem struct{ total uint64 }

func (m *runtimeMem) read() {
	var s runtime.MemStats
	runtime.ReadMemStats(&s)
	m.total = s.TotalAlloc
}

func TestListenConfigValidate(t *testing.T) {
	loop := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 9100}
	any := &net.TCPAddr{IP: net.IPv4zero, Port: 9100}
	base := testListenConfig(nil)
	insecure := base
	insecure.Insecure = true
	withSecret := testListenConfig([]byte("s"))
	for _, tc := range []struct {
		name string
		cfg  ListenConfig
		addr net.Addr
		ok   bool
	}{
		{"secret on any address", withSecret, any, true},
		{"no secret", base, loop, false},
		{"insecure on loopback", insecure, loop, true},
		{"insecure on all addresses", insecure, any, false},
		{"no handshake budget", with(withSecret, func(c *ListenConfig) { c.MaxHandshakes = 0 }), loop, false},
		{"a large handshake budget", with(withSecret, func(c *ListenConfig) { c.MaxHandshakes = MaxHandshakesLimit + 1 }), loop, false},
		{"no handshake deadline", with(withSecret, func(c *ListenConfig) { c.HandshakeTimeout = 0 }), loop, false},
		{"a long handshake deadline", with(withSecret, func(c *ListenConfig) { c.HandshakeTimeout = 2 * time.Minute }), loop, false},
	} {
		if err := tc.cfg.Validate(tc.addr); (err == nil) != tc.ok {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}

// with returns c changed by mod.
func with(c ListenConfig, mod func(*ListenConfig)) ListenConfig { mod(&c); return c }

func TestParseAddrs(t *testing.T) {
	good := map[string][]Addr{
		"http://127.0.0.1:9100,127.0.0.1:9101": {{"127.0.0.1", 9100, false}, {"127.0.0.1", 9101, false}},
		"https://[::1]:9100/":                  {{"::1", 9100, true}},
		"tcp://imager-1.internal:9100":         {{"imager-1.internal", 9100, false}},
	}
	for in, want := range good {
		got, err := ParseAddrs(in)
		if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("ParseAddrs(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "127.0.0.1", "127.0.0.1:0", "127.0.0.1:65536", "127.0.0.1:+80", "ftp://h:1",
		"http://h:1/path", "http://u@h:1", "h:1,h:1", "h:1,", "-h:1", "h_x:1", "[fe80::1%eth0]:1", "http://h:1?x"} {
		if got, err := ParseAddrs(in); err == nil || codeOf(err) != coffer.EINVALID {
			t.Errorf("ParseAddrs(%q) = %v, %v; want EINVALID", in, got, err)
		}
	}
}

// silentWorker accepts servers on loopback, says Hello offering pings and then reads
// and ignores everything: a worker that hangs with its connection open.
func silentWorker(t *testing.T, secret string) Addr {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				if acceptHandshake(conn, []byte(secret), rand.Reader) != nil {
					return
				}
				hello := &imagerpc.Frame{Body: &imagerpc.Frame_Hello{Hello: &imagerpc.Hello{Protocol: protocol, Formats: []string{"jpeg"}, Ping: true}}}
				if (&frameWriter{w: conn}).WriteFrame(hello) == nil {
					io.Copy(io.Discard, conn)
				}
			}()
		}
	}()
	return Addr{Host: "127.0.0.1", Port: ln.Addr().(*net.TCPAddr).Port}
}

// A worker that answers pings stays connected; one that does not is disconnected,
// with the reason in its state, and its connection made again.
func TestClusterPings(t *testing.T) {
	live, _ := listenInProcess(t, testListenConfig([]byte("s")), 1)
	silent := silentWorker(t, "s")
	wc := DefaultConfig("unused")
	wc.Imaging.Workers, wc.StartTimeout, wc.RestartBackoff, wc.MaxRestartBackoff = 2, 2*time.Second, 10*time.Millisecond, 20*time.Millisecond
	c, err := NewCluster(ClusterConfig{Worker: wc, Addrs: []Addr{live, silent}, Secret: []byte("s"), PingInterval: 10 * time.Millisecond,
		PingTimeout: 50 * time.Millisecond, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	deadline := time.Now().Add(5 * time.Second)
	for c.Workers()[1].FailuresTotal < 2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	s := c.Workers()
	if s[1].FailuresTotal < 2 || !strings.Contains(s[1].LastError, "did not answer a ping") {
		t.Errorf("silent worker %+v: want disconnected twice for not answering pings", s[1])
	}
	if !s[0].Healthy || s[0].FailuresTotal != 0 {
		t.Errorf("live worker %+v: want connected, no failure", s[0])
	}
}
