package hostile

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coffer/coffer/imaging"
	"github.com/coffer/coffer/imaging/imagingtest"
	"github.com/coffer/coffer/imaging/remote"
)

const imagerSecret = "hostile-imager-secret"

// TestImagerSlots: silent TCP connections to a listening coffer-imager (more than
// its --max-conns and --max-handshakes, at their defaults of 64 and 16), first from
// the server's own address and then from another one all along while the server
// connects, keep no server with the secret out: it connects and transforms within
// its start timeout. Every silent connection is closed by the handshake deadline
// (--handshake-timeout, 3 s). An imager speaks no HTTP: a silent connection's probe
// answers 408 when the imager closed it in time, 200 when it kept it; the server's
// 200 when its transformation came back, 503 when it was kept out.
func TestImagerSlots(t *testing.T) {
	if imagerPath == "" {
		t.Skip("libvips is not installed (pkg-config vips): no coffer-imager to listen")
	}
	const deadline, slack = 3 * time.Second, 2 * time.Second
	im := startImager(t)
	panics := new(atomic.Int64)
	tl := (&server{t: t, panics: panics}).tally("imager") // no coffer server: the imager's own panics, counted below
	silent, err := imagingtest.DialSilents(im.Addr, "127.0.0.1", 80)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { imagingtest.CloseAll(silent) }()
	floods := []func() ([]*imagingtest.Silent, error){ // as fast as they can
		imagingtest.Flood(im.Addr, "127.0.0.2", time.Microsecond), imagingtest.Flood(im.Addr, "127.0.0.2", time.Microsecond)}
	time.Sleep(100 * time.Millisecond) // under way, and on until the server is done
	a, wrong := im.serverTransforms()
	tl.probe("a server with the secret, during the flood", a, wrong)
	for _, stop := range floods {
		more, err := stop()
		if err != nil {
			t.Fatalf("the flood: %v", err)
		}
		silent = append(silent, more...)
	}
	for i, s := range silent {
		a, wrong := answer{status: http.StatusRequestTimeout}, ""
		if !s.ClosedWithin(deadline + slack) {
			a.status, wrong = http.StatusOK, fmt.Sprintf("still connected %v after it opened (handshake deadline %v)", deadline+slack, deadline)
		}
		tl.probe(fmt.Sprintf("silent connection %d of %d", i+1, len(silent)), a, wrong)
	}
	if im.Exited() {
		tl.probe("the imager after the flood", answer{status: http.StatusOK}, "the imager exited: "+im.Logs())
	}
	panics.Store(im.panics())
}

// startImager starts the built coffer-imager listening on a free loopback port with
// the suite's secret and its default limits, stopped when the test ends.
func startImager(t *testing.T) *imager {
	t.Helper()
	im, err := imagingtest.StartImager(imagerPath, []string{"COFFER_IMAGER_SECRET=" + imagerSecret})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(im.Stop)
	addrs, err := remote.ParseAddrs(im.Addr)
	if err != nil {
		t.Fatal(err)
	}
	return &imager{Imager: im, addr: addrs[0]}
}

// imager is a listening coffer-imager and its address for a remote.Cluster.
type imager struct {
	*imagingtest.Imager
	addr remote.Addr
}

// panics counts the Go panics and fatal errors in the imager's log.
func (im *imager) panics() int64 {
	n := 0
	for _, line := range strings.Split(im.Logs(), "\n") {
		if strings.HasPrefix(line, "panic:") || strings.HasPrefix(line, "fatal error:") {
			n++
		}
	}
	return int64(n)
}

// serverTransforms connects to the imager as coffer serve does (a remote.Cluster
// with the secret, a 5 s start timeout), transforms a small JPEG through it and
// says what is wrong with the outcome ("" = nothing).
func (im *imager) serverTransforms() (answer, string) {
	wc := remote.DefaultConfig("unused")
	wc.Imaging.Workers, wc.StartTimeout = 1, 5*time.Second
	c, err := remote.NewCluster(remote.ClusterConfig{Worker: wc, Addrs: []remote.Addr{im.addr}, Secret: []byte(imagerSecret),
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		return answer{status: http.StatusServiceUnavailable, body: []byte(err.Error())}, "kept out of the imager"
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := c.Transform(ctx, bytes.NewReader(imagingtest.JPEG(64, 48)), imaging.Options{Width: 16, Format: imaging.JPEG})
	if err != nil {
		return answer{status: http.StatusServiceUnavailable, body: []byte(err.Error())}, "connected, but the transformation failed"
	}
	if res.Width != 16 || len(res.Data) == 0 {
		return answer{status: http.StatusOK}, fmt.Sprintf("a %dx%d result of %d bytes, want 16 px wide", res.Width, res.Height, len(res.Data))
	}
	return answer{status: http.StatusOK}, ""
}
