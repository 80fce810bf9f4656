package e2e

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// TestCrashDuringUploads kills the server with SIGKILL while 20 uploads stream in, then
// restarts it: every listed file must be complete and match its etag, and after the
// startup sweep no temp file or orphan blob may remain.
func TestCrashDuringUploads(t *testing.T) {
	dataDir := t.TempDir()
	env := []string{"COFFER_DATA_DIR=" + dataDir}
	p := start(t, env...)
	var committed sync.Map
	var started atomic.Int32
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			// Sizes from 64 KiB to ~40 MiB so some finish before the kill and some do not.
			size := int64(64<<10) << (i % 10)
			started.Add(1)
			f, err := p.uploadStream(ctx, "crash/"+strconv.Itoa(i)+".bin", newGen(size, uint64(i)))
			if err == nil {
				committed.Store(f.ID, f)
			}
		}(i)
	}
	time.Sleep(400 * time.Millisecond)
	p.kill9()
	cancel()
	wg.Wait()

	p = start(t, env...)
	files := p.listAll("default")
	n := 0
	committed.Range(func(_, _ any) bool { n++; return true })
	t.Logf("%d uploads acknowledged before the kill, %d files listed after restart", n, len(files))
	listed := map[string]bool{}
	for _, f := range files {
		listed[f.ID] = true
		etag, size := p.downloadMD5(f.ID)
		if etag != f.ETag || size != f.Size {
			t.Errorf("file %s: downloaded %s/%d, stored %s/%d", f.Name, etag, size, f.ETag, f.Size)
		}
	}
	committed.Range(func(k, _ any) bool {
		if !listed[k.(string)] {
			t.Errorf("acknowledged upload %s is missing after restart", k)
		}
		return true
	})
	var orphans struct{ Files []string }
	p.postJSON("/v1/ops/list-orphans", &orphans)
	if len(orphans.Files) != 0 {
		t.Errorf("orphan blobs after restart: %v", orphans.Files)
	}
	var notUploaded struct{ Metadata []fileMeta }
	p.postJSON("/v1/ops/list-not-uploaded", &notUploaded)
	if len(notUploaded.Metadata) != 0 {
		t.Errorf("not-uploaded rows after restart: %v", notUploaded.Metadata)
	}
	tmp, _ := os.ReadDir(filepath.Join(dataDir, "blobs", "tmp"))
	if len(tmp) != 0 {
		t.Errorf("%d temp files left after the startup sweep", len(tmp))
	}
}

// TestLargeUploadConstantMemory streams a large file up and down and checks the
// server's peak RSS stays far below the file size. COFFER_E2E_LARGE_MB sets the size
// (default 256; docs/benchmarks/uploads.md reports a 1024 MB run).
func TestLargeUploadConstantMemory(t *testing.T) {
	mb := int64(256)
	if s := os.Getenv("COFFER_E2E_LARGE_MB"); s != "" {
		mb, _ = strconv.ParseInt(s, 10, 64)
	}
	size := mb << 20
	p := start(t, "COFFER_DATA_DIR="+t.TempDir())
	p.unlimitDefaultBucket()
	t0 := time.Now()
	f, err := p.uploadStream(context.Background(), "large.bin", newGen(size, 42))
	if err != nil {
		t.Fatal(err)
	}
	upRSS, upDur := p.peakRSS(), time.Since(t0)
	t0 = time.Now()
	etag, n := p.downloadMD5(f.ID)
	downRSS, downDur := p.peakRSS(), time.Since(t0)
	if etag != f.ETag || n != size {
		t.Fatalf("download %s/%d, want %s/%d", etag, n, f.ETag, size)
	}
	t.Logf("%d MB: upload %.1fs, peak RSS after upload %d MB; download %.1fs, peak RSS after download %d MB",
		mb, upDur.Seconds(), upRSS>>20, downDur.Seconds(), downRSS>>20)
	if downRSS > 96<<20 {
		t.Errorf("peak RSS %d MB: the server is buffering", downRSS>>20)
	}
}

// TestGracefulShutdown sends SIGTERM during a slow download: the download completes,
// new connections are refused, and the process exits cleanly.
func TestGracefulShutdown(t *testing.T) {
	p := start(t, "COFFER_DATA_DIR="+t.TempDir())
	f, err := p.uploadStream(context.Background(), "slow.bin", newGen(8<<20, 3))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := p.request(context.Background(), "GET", "/v1/files/"+f.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	buf := make([]byte, 64<<10)
	if _, err := io.ReadFull(resp.Body, buf); err != nil {
		t.Fatal(err)
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	time.Sleep(300 * time.Millisecond)
	rest, err := io.Copy(io.Discard, resp.Body)
	if err != nil || int64(len(buf))+rest != f.Size {
		t.Fatalf("in-flight download cut short: %d of %d bytes, %v", int64(len(buf))+rest, f.Size, err)
	}
	select {
	case <-p.exited:
	case <-time.After(10 * time.Second):
		t.Fatal("server did not exit after draining")
	}
	if code := p.cmd.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("exit code %d; logs:\n%s", code, p.logs)
	}
}

// TestH2CFlag: `--h2c` (COFFER_H2C) makes the binary answer HTTP/2 without TLS on its
// port, beside HTTP/1.1; without it, an HTTP/2-only client gets no answer.
func TestH2CFlag(t *testing.T) {
	tr := &http.Transport{Protocols: new(http.Protocols)}
	tr.Protocols.SetUnencryptedHTTP2(true)
	c := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	defer tr.CloseIdleConnections()
	for _, on := range []bool{true, false} {
		p := start(t, "COFFER_DATA_DIR="+t.TempDir(), fmt.Sprintf("COFFER_H2C=%t", on))
		f, err := p.uploadStream(context.Background(), "h2c.bin", newGen(200<<10, 7))
		if err != nil {
			t.Fatal(err)
		}
		req, _ := http.NewRequest("GET", p.url+"/v1/files/"+f.ID, nil)
		req.Header.Set("X-Hasura-Admin-Secret", adminSecret)
		resp, err := c.Do(req)
		if !on {
			if err == nil {
				resp.Body.Close()
				t.Fatalf("h2c off: an HTTP/2-only client got %s %d", resp.Proto, resp.StatusCode)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		h := md5.New()
		n, err := io.Copy(h, resp.Body)
		resp.Body.Close()
		sum := `"` + hex.EncodeToString(h.Sum(nil)) + `"`
		if err != nil || resp.ProtoMajor != 2 || resp.StatusCode != 200 || n != f.Size || sum != f.ETag {
			t.Fatalf("h2c on: %s %d, %d of %d bytes, md5 %s (etag %s), %v", resp.Proto, resp.StatusCode, n, f.Size, sum, f.ETag, err)
		}
		if md5s, size := p.downloadMD5(f.ID); size != f.Size || md5s != f.ETag {
			t.Fatalf("HTTP/1.1 beside h2c: %d bytes, md5 %s", size, md5s)
		}
	}
}
