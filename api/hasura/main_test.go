package hasura_test

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/coffer/coffer/api/hasura"
	"github.com/coffer/coffer/app"
	"github.com/coffer/coffer/auth"
	"github.com/coffer/coffer/blob"
	"github.com/coffer/coffer/cache"
	"github.com/coffer/coffer/imaging"
	"github.com/coffer/coffer/imaging/vips"
	"github.com/coffer/coffer/internal/apptest"
	"github.com/coffer/coffer/internal/httpserve"
	"github.com/coffer/coffer/meta"
	"github.com/coffer/coffer/service"
	"github.com/coffer/coffer/webhook"
)

const adminSecret = "test-admin-secret"

type env struct {
	t     *testing.T
	srv   *testServer
	svc   *service.Service
	blobs *blob.Store
	db    *meta.Counting // every metadata store call, under the cache
	cache *cache.Meta
	// blobDir is the disk blob store's directory.
	blobDir string
}

// testServer is where the env's server listens, and a client for it.
type testServer struct {
	URL     string
	Addr    string
	Handler http.Handler
	client  *http.Client
}

// Client returns a client for the server whose connections close with the test.
func (s *testServer) Client() *http.Client { return s.client }

// envOptions change the test server's setup.
type envOptions struct {
	jwtSecret string // Hasura JWT config JSON
	rules     string // rules document
	readIdle  time.Duration
	writeTime time.Duration  // WriteTimeout
	images    bool           // install the libvips engine
	engine    imaging.Engine // or this one
	webhooks  bool           // webhooks may reach loopback, with short backoffs
	h2c       bool           // also serve HTTP/2 without TLS
	slow      bool           // without the HTTP/1.1 fast path (--fast-path=false)
	hide      bool           // service.Config.HideForbidden
	log       *slog.Logger   // default: text to io.Discard
	accessLog *httpserve.AccessLogConfig
	metrics   hasura.Config // its MetricsToken and MetricsElsewhere apply
	clamd     string        // scan uploads with the clamd at this address
	failOpen  bool          // store uploads unscanned when that clamd is unavailable
}

// newEnv starts the server as cmd/coffer does (app.New, SQLite and disk blobs in a
// temp dir) on 127.0.0.1, with the settings of opts.
func newEnv(t testing.TB, opts ...envOptions) *env {
	t.Helper()
	var o envOptions
	if len(opts) > 0 {
		o = opts[0]
	}
	log := o.log
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	cfg, parts := envConfig(t, o)
	srv := &testServer{URL: cfg.PublicURL, client: &http.Client{Transport: &http.Transport{}}}
	t.Cleanup(srv.client.CloseIdleConnections) // runs after coffer stops
	m := apptest.Start(t, cfg, parts, log)
	srv.Addr, srv.Handler = m.Addr().String(), m.Handler()
	tt, _ := t.(*testing.T)
	return &env{t: tt, srv: srv, svc: m.Service(), blobs: m.Blobs(), db: m.DBCalls(), cache: m.MetaCache(),
		blobDir: filepath.Join(cfg.DataDir, "blobs")}
}

// envConfig returns the app configuration and parts of o, over a temp data dir and a
// free loopback port.
func envConfig(t testing.TB, o envOptions) (app.Config, app.Parts) {
	cfg := apptest.Config(t)
	cfg.AdminSecret, cfg.JWTSecret, cfg.H2C, cfg.Compat.HideForbidden = adminSecret, o.jwtSecret, o.h2c, o.hide
	cfg.FastPath = !o.slow
	cfg.MetricsToken, cfg.ClamAV.Addr, cfg.ClamAV.FailOpen, cfg.ClamAV.Timeout = o.metrics.MetricsToken, o.clamd, o.failOpen, 10*time.Second
	if o.accessLog != nil {
		cfg.AccessLog, cfg.AccessLogReads = o.accessLog.Mode, o.accessLog.ReadsPerSecond
	}
	if o.rules != "" {
		cfg.RulesFile = filepath.Join(cfg.DataDir, "rules.json")
		if err := os.WriteFile(cfg.RulesFile, []byte(o.rules), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	signer, _ := auth.NewSigner("k1", map[string][]byte{"k1": bytes.Repeat([]byte("k"), 32)})
	parts := app.Parts{Images: envEngine(t, o), Resolver: testResolver, Signer: signer, HTTP: func(h *hasura.Config) {
		h.ReadIdleTimeout = cmp.Or(o.readIdle, h.ReadIdleTimeout)
		h.WriteTimeout = cmp.Or(o.writeTime, h.WriteTimeout)
		h.MetricsElsewhere = o.metrics.MetricsElsewhere
	}}
	if o.webhooks {
		cfg.Webhooks.AllowNetworks, cfg.Webhooks.Timeout = []string{"127.0.0.0/8"}, 2*time.Second
		parts.Webhooks = func(w *webhook.Config) {
			w.BackoffBase, w.BackoffMax, w.Poll = 5*time.Millisecond, 20*time.Millisecond, 20*time.Millisecond
		}
	}
	return cfg, parts
}

// envEngine returns the image engine of o: the libvips engine in this process, o's
// engine, or one that answers 501.
func envEngine(t testing.TB, o envOptions) imaging.Engine {
	switch {
	case o.engine != nil:
		return o.engine
	case !o.images:
		return imaging.NewDisabled("no image engine in this test")
	}
	icfg := imaging.DefaultConfig()
	icfg.Workers, icfg.Queue = 2, 8
	engine, err := vips.New(icfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { engine.Close() })
	return engine
}

type part struct {
	field, filename, ctype string
	body                   []byte
}

func multipartBody(parts ...part) (*bytes.Buffer, string) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for _, p := range parts {
		h := textproto.MIMEHeader{}
		cd := fmt.Sprintf(`form-data; name=%q`, p.field)
		if p.filename != "" {
			cd += fmt.Sprintf(`; filename=%q`, p.filename)
		}
		h.Set("Content-Disposition", cd)
		if p.ctype != "" {
			h.Set("Content-Type", p.ctype)
		}
		w, _ := mw.CreatePart(h)
		w.Write(p.body)
	}
	mw.Close()
	return &buf, mw.FormDataContentType()
}

// do sends a request; admin adds the admin secret.
func (e *env) do(method, path string, body io.Reader, admin bool, hdr ...string) *http.Response {
	e.t.Helper()
	req, err := http.NewRequest(method, e.srv.URL+path, body)
	if err != nil {
		e.t.Fatal(err)
	}
	if admin {
		req.Header.Set("X-Hasura-Admin-Secret", adminSecret)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := e.srv.Client().Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	return resp
}

func (e *env) upload(admin bool, parts ...part) *http.Response {
	e.t.Helper()
	body, ctype := multipartBody(parts...)
	return e.do("POST", "/v1/files", body, admin, "Content-Type", ctype)
}

type uploadResp struct {
	ProcessedFiles []hasura.FileMetadata `json:"processedFiles"`
}

// uploadOne uploads content as name into bucket and returns its metadata.
func (e *env) uploadOne(bucket, name string, content []byte) hasura.FileMetadata {
	e.t.Helper()
	md, _ := json.Marshal(map[string]string{"name": name})
	resp := e.upload(true, part{field: "bucket-id", body: []byte(bucket)}, part{field: "file[]", filename: "upload", body: content},
		part{field: "metadata[]", body: md})
	var out uploadResp
	mustStatus(e.t, resp, http.StatusCreated, &out)
	if len(out.ProcessedFiles) != 1 {
		e.t.Fatalf("processedFiles: %+v", out)
	}
	return out.ProcessedFiles[0]
}

// mustStatus checks the status and decodes a JSON body into v (if non-nil).
func mustStatus(t *testing.T, resp *http.Response, want int, v any) []byte {
	t.Helper()
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		t.Fatalf("%s %s: status %d, want %d; body %s", resp.Request.Method, resp.Request.URL.Path, resp.StatusCode, want, b)
	}
	if v != nil {
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("decode %s: %v", b, err)
		}
	}
	return b
}

// mustError checks an error response: status, JSON shape and X-Error header.
func mustError(t *testing.T, resp *http.Response, want int) string {
	t.Helper()
	var e hasura.ErrorBody
	body := mustStatus(t, resp, want, nil)
	if resp.Request.Method == http.MethodHead {
		if resp.Header.Get("X-Error") == "" {
			t.Fatalf("HEAD error without X-Error header")
		}
		return resp.Header.Get("X-Error")
	}
	if err := json.Unmarshal(body, &e); err != nil || e.Error.Message == "" {
		t.Fatalf("error body %q is not {\"error\":{\"message\":...}}", body)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("error Content-Type %q", ct)
	}
	return e.Error.Message
}
