package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coffer/coffer/imaging/imagingtest"
)

const imagerSecret = "e2e-imager-secret"

// startImager runs coffer-imager --listen on a loopback port chosen by the system,
// with env and args, and returns it once it logged its address.
func startImager(t *testing.T, env []string, args ...string) *imagingtest.Imager {
	t.Helper()
	w, err := imagingtest.StartImager(imager, env, args...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	return w
}

// TestRemoteImageWorkers runs two coffer-imager --listen and one coffer serve
// --image-workers-remote on loopback: transformations are spread across both, the
// server starts no child, killing one worker under load leaves answers of 200 or
// 503 only and the other worker answering, and wrong secrets are refused.
func TestRemoteImageWorkers(t *testing.T) {
	if imager == "" {
		t.Skip("libvips is not installed (pkg-config vips): no coffer-imager")
	}
	env := []string{"COFFER_IMAGER_SECRET=" + imagerSecret}
	w1, w2 := startImager(t, env), startImager(t, env)
	p := start(t, "COFFER_DATA_DIR="+t.TempDir(), "COFFER_IMAGE_WORKERS_REMOTE=http://"+w1.Addr+","+w2.Addr,
		"COFFER_IMAGE_WORKERS_SECRET="+imagerSecret, "COFFER_IMAGE_WORKERS=4", "COFFER_VARIANT_CACHE_SIZE=0", "COFFER_VARIANTS_PER_FILE=0")
	f, err := p.uploadStream(context.Background(), "photo.jpg", bytes.NewReader(testJPEG(t, 1200, 900)))
	if err != nil {
		t.Fatal(err)
	}
	codes := p.transformLoad(f.ID, 4, 24, nil)
	if codes[200] != 24 {
		t.Fatalf("statuses %v, want 24 x 200\nlogs:\n%s", codes, p.logs)
	}
	n1, n2 := p.workerCount(w1.Addr), p.workerCount(w2.Addr)
	t.Logf("24 transformations: %v on %s, %v on %s", n1, w1.Addr, n2, w2.Addr)
	if n1 < 1 || n2 < 1 || n1+n2 != 24 {
		t.Errorf("per-worker transformations %v and %v: want both > 0, 24 in all", n1, n2)
	}
	if kids := p.children(); len(kids) != 0 {
		t.Errorf("the server started children %v", kids)
	}
	var info struct {
		ImageWorkers struct {
			RemoteWorkers []struct {
				Addr       string
				Healthy    bool
				Transforms int64
			}
		}
	}
	p.mustAdmin(&info, "server", "info")
	if rw := info.ImageWorkers.RemoteWorkers; len(rw) != 2 || rw[0].Addr != w1.Addr || !rw[0].Healthy ||
		rw[0].Transforms != int64(n1) || rw[1].Addr != w2.Addr || rw[1].Transforms != int64(n2) {
		t.Errorf("coffer admin server info: remote workers %+v, want %s (%v) and %s (%v), healthy", rw, w1.Addr, n1, w2.Addr, n2)
	}
	codes = p.transformLoad(f.ID, 4, 60, func() { w1.Cmd.Process.Kill() })
	t.Logf("60 transformations, %s killed after the 10th: statuses %v", w1.Addr, codes)
	if codes[200]+codes[503] != 60 || codes[200] < 30 {
		t.Errorf("statuses %v: want 200 and 503 only, most 200", codes)
	}
	if up := p.metric(fmt.Sprintf("coffer_image_remote_worker_up{worker=%q}", w1.Addr)); up != 0 {
		t.Errorf("killed worker up = %v", up)
	}
	if codes = p.transformLoad(f.ID, 2, 6, nil); codes[200] != 6 {
		t.Errorf("after the kill: statuses %v, want 6 x 200", codes)
	}
}

// workerCount returns the transformations worker addr answered, from /metrics.
func (p *proc) workerCount(addr string) float64 {
	return p.metric(fmt.Sprintf("coffer_image_remote_worker_transforms_total{worker=%q}", addr))
}

// transformLoad asks for n transformations of file id (each a new width) from
// `clients` goroutines and counts the statuses; after the 10th answer it calls
// midway (if not nil).
func (p *proc) transformLoad(id string, clients, n int, midway func()) map[int]int {
	var mu sync.Mutex
	codes := make(map[int]int)
	next, answered := 0, 0
	var wg sync.WaitGroup
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if i >= n {
					return
				}
				code := p.status("GET", fmt.Sprintf("/v1/files/%s?w=%d&f=jpeg", id, 100+i), nil)
				mu.Lock()
				codes[code]++
				if answered++; answered == 10 && midway != nil {
					midway()
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return codes
}

// A worker without a secret refuses to listen beyond loopback, and a server with a
// wrong secret does not start.
func TestRemoteImageWorkersRefuse(t *testing.T) {
	if imager == "" {
		t.Skip("libvips is not installed (pkg-config vips): no coffer-imager")
	}
	for _, args := range [][]string{{"--listen", "127.0.0.1:0"}, {"--listen", "0.0.0.0:0", "--insecure"}} {
		out, err := exec.Command(imager, args...).CombinedOutput()
		if err == nil || !strings.Contains(string(out), "refusing to listen without authentication") && !strings.Contains(string(out), "only allowed on a loopback") {
			t.Errorf("coffer-imager %q: %v\n%s", args, err, out)
		}
	}
	w := startImager(t, []string{"COFFER_IMAGER_SECRET=" + imagerSecret})
	launch(t, "COFFER_DATA_DIR="+t.TempDir(), "COFFER_IMAGE_WORKERS_REMOTE="+w.Addr, "COFFER_IMAGE_WORKERS_SECRET=wrong").wantNoWorker()
	if !strings.Contains(w.Logs(), "refused an unauthenticated connection") {
		t.Errorf("worker logs:\n%s", w.Logs())
	}
}

// The TLS flags of both binaries: a worker with --tls-cert/--tls-key/--tls-client-ca
// and no secret serves a server with https:// and --image-workers-tls-*, and a server
// without a client certificate does not start.
func TestRemoteImageWorkersMutualTLS(t *testing.T) {
	if imager == "" {
		t.Skip("libvips is not installed (pkg-config vips): no coffer-imager")
	}
	dir := t.TempDir()
	ca := imagingtest.NewCA()
	caFile := ca.WriteCA(dir)
	wCert, wKey := ca.WriteIssued(dir, "worker")
	sCert, sKey := ca.WriteIssued(dir, "server")
	w := startImager(t, nil, "--tls-cert", wCert, "--tls-key", wKey, "--tls-client-ca", caFile)
	tlsEnv := []string{"COFFER_IMAGE_WORKERS_REMOTE=https://" + w.Addr, "COFFER_IMAGE_WORKERS_TLS_CA=" + caFile}
	p := start(t, append(tlsEnv, "COFFER_DATA_DIR="+t.TempDir(), "COFFER_IMAGE_WORKERS_TLS_CERT="+sCert, "COFFER_IMAGE_WORKERS_TLS_KEY="+sKey)...)
	f, err := p.uploadStream(context.Background(), "photo.jpg", bytes.NewReader(testJPEG(t, 400, 300)))
	if err != nil {
		t.Fatal(err)
	}
	p.wantImage(f.ID, 100, 75)
	if n := p.workerCount(w.Addr); n != 1 {
		t.Errorf("worker answered %v transformations, want 1", n)
	}
	launch(t, append(tlsEnv, "COFFER_DATA_DIR="+t.TempDir())...).wantNoWorker() // no client certificate
}

// wantNoWorker waits for a server whose image workers all refused it to exit, saying so.
func (p *proc) wantNoWorker() {
	p.t.Helper()
	select {
	case <-p.exited:
	case <-time.After(30 * time.Second):
		p.t.Fatal("coffer serve did not exit")
	}
	if !strings.Contains(p.logs.String(), "no image worker answered") {
		p.t.Errorf("server logs:\n%s", p.logs)
	}
}
