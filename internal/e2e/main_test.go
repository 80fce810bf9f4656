// Package e2e tests the built coffer binary over real HTTP on loopback, with SQLite and
// disk by default and with a real PostgreSQL and S3 server when the test scripts
// provide them (COFFER_TEST_DATABASE_URL, COFFER_TEST_S3_*).
package e2e

import (
	"bufio"
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/coffer/coffer/imaging/imagingtest"
)

const adminSecret = "e2e-admin-secret"

var (
	binary string // coffer
	imager string // coffer-imager, "" without libvips
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "coffer-e2e")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "coffer")
	out, err := exec.Command("go", "build", "-o", binary, "github.com/coffer/coffer/cmd/coffer").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "build coffer: %v\n%s", err, out)
		os.Exit(1)
	}
	// The image worker goes next to coffer, where coffer looks for it, if libvips is
	// installed; without it the image tests skip.
	if imager, err = imagingtest.BuildImager(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// proc is a running coffer server.
type proc struct {
	t      *testing.T
	cmd    *exec.Cmd
	url    string
	logs   *syncBuffer
	exited chan struct{}
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// start runs `coffer serve` with the given env (on top of a listen address and the
// admin secret) and waits until /healthz answers.
func start(t *testing.T, env ...string) *proc {
	t.Helper()
	p := launch(t, env...)
	p.waitHealthy()
	return p
}

func launch(t *testing.T, env ...string) *proc {
	t.Helper()
	addr := freeAddr(t)
	cmd := exec.Command(binary, "serve")
	cmd.Env = append(os.Environ(), "COFFER_LISTEN="+addr, "COFFER_ADMIN_SECRET="+adminSecret, "COFFER_LOG_LEVEL=warn")
	cmd.Env = append(cmd.Env, env...)
	logs := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{t: t, cmd: cmd, url: "http://" + addr, logs: logs, exited: make(chan struct{})}
	go func() { cmd.Wait(); close(p.exited) }()
	t.Cleanup(p.stop)
	return p
}

func (p *proc) waitHealthy() {
	p.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Get(p.url + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
		}
		select {
		case <-p.exited:
			p.t.Fatalf("coffer exited; logs:\n%s", p.logs)
		case <-time.After(50 * time.Millisecond):
		}
	}
	p.t.Fatalf("coffer did not become healthy; logs:\n%s", p.logs)
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func (p *proc) stop() {
	select {
	case <-p.exited:
		return
	default:
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(15 * time.Second):
		p.cmd.Process.Kill()
		<-p.exited
	}
}

func (p *proc) kill9() {
	p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.exited
}

// peakRSS returns VmHWM of the server in bytes.
func (p *proc) peakRSS() int64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		p.t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb * 1024
		}
	}
	p.t.Fatal("no VmHWM")
	return 0
}

func (p *proc) request(ctx context.Context, method, path string, body io.Reader, hdr ...string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, p.url+path, body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("X-Hasura-Admin-Secret", adminSecret)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	return http.DefaultClient.Do(req)
}

type fileMeta struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	Size  int64  `json:"size"`
	ETag  string `json:"etag"`
	Bytes []byte `json:"-"`
}

// uploadStream uploads size bytes from gen as name, streaming the multipart body.
func (p *proc) uploadStream(ctx context.Context, name string, gen io.Reader) (fileMeta, error) {
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() {
		w, err := mw.CreateFormFile("file[]", name)
		if err == nil {
			_, err = io.Copy(w, gen)
		}
		if err == nil {
			err = mw.Close()
		}
		pw.CloseWithError(err)
	}()
	resp, err := p.request(ctx, "POST", "/v1/files", pr, "Content-Type", mw.FormDataContentType())
	if err != nil {
		return fileMeta{}, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 201 {
		return fileMeta{}, fmt.Errorf("upload %s: %d %s", name, resp.StatusCode, b)
	}
	var out struct{ ProcessedFiles []fileMeta }
	if err := json.Unmarshal(b, &out); err != nil || len(out.ProcessedFiles) != 1 {
		return fileMeta{}, fmt.Errorf("upload response %s: %v", b, err)
	}
	return out.ProcessedFiles[0], nil
}

// unlimitDefaultBucket lifts the default bucket's upload size limit.
func (p *proc) unlimitDefaultBucket() {
	p.t.Helper()
	resp, err := p.request(context.Background(), "PATCH", "/v1/buckets/default", strings.NewReader(`{"maxUploadFileSize":0}`))
	if err != nil || resp.StatusCode != 200 {
		p.t.Fatalf("unlimit bucket: %v %v", err, resp)
	}
	resp.Body.Close()
}

// downloadMD5 streams a file and returns its quoted md5 and size.
func (p *proc) downloadMD5(id string) (string, int64) {
	p.t.Helper()
	resp, err := p.request(context.Background(), "GET", "/v1/files/"+id, nil)
	if err != nil {
		p.t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		p.t.Fatalf("download %s: %d", id, resp.StatusCode)
	}
	h := md5.New()
	n, err := io.Copy(h, resp.Body)
	if err != nil {
		p.t.Fatal(err)
	}
	return `"` + hex.EncodeToString(h.Sum(nil)) + `"`, n
}

func (p *proc) listAll(bucket string) []fileMeta {
	p.t.Helper()
	var all []fileMeta
	cursor := ""
	for {
		resp, err := p.request(context.Background(), "GET", "/v1/buckets/"+bucket+"/files?limit=1000&cursor="+cursor, nil)
		if err != nil {
			p.t.Fatal(err)
		}
		var out struct {
			Files      []fileMeta
			NextCursor string
		}
		json.NewDecoder(resp.Body).Decode(&out)
		resp.Body.Close()
		all = append(all, out.Files...)
		if cursor = out.NextCursor; cursor == "" {
			return all
		}
	}
}

func (p *proc) postJSON(path string, v any) {
	p.t.Helper()
	resp, err := p.request(context.Background(), "POST", path, nil)
	if err != nil {
		p.t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		p.t.Fatalf("POST %s: %d %s", path, resp.StatusCode, b)
	}
	json.NewDecoder(resp.Body).Decode(v)
}

// gen is a deterministic pseudo-random byte stream of n bytes.
type gen struct {
	n, off int64
	seed   uint64
}

func newGen(n int64, seed uint64) *gen { return &gen{n: n, seed: seed | 1} }

func (g *gen) Read(p []byte) (int, error) {
	if g.off >= g.n {
		return 0, io.EOF
	}
	if int64(len(p)) > g.n-g.off {
		p = p[:g.n-g.off]
	}
	for i := range p {
		g.seed ^= g.seed << 13
		g.seed ^= g.seed >> 7
		g.seed ^= g.seed << 17
		p[i] = byte(g.seed)
	}
	g.off += int64(len(p))
	return len(p), nil
}
