package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"path/filepath"
	"testing"
	"time"

	"github.com/coffer/coffer/auth"
	"github.com/coffer/coffer/blob"
	"github.com/coffer/coffer/blob/fsblob"
	"github.com/coffer/coffer/cache"
	"github.com/coffer/coffer/httpapi"
	"github.com/coffer/coffer/imaging"
	"github.com/coffer/coffer/imaging/vips"
	"github.com/coffer/coffer/meta"
	"github.com/coffer/coffer/meta/sqlite"
	"github.com/coffer/coffer/metrics"
	"github.com/coffer/coffer/service"
)

const adminSecret = "test-admin-secret"

type env struct {
	t     *testing.T
	srv   *httptest.Server
	svc   *service.Service
	blobs *blob.Store
	db    *meta.Counting // every metadata store call, under the cache
	cache *cache.Meta
	// blobDir is the disk blob store's directory.
	blobDir string
}

// envOptions change the test server's setup.
type envOptions struct {
	jwtSecret string // Hasura JWT config JSON
	rules     string // rules document
	readIdle  time.Duration
	writeTime time.Duration  // WriteTimeout
	images    bool           // install the libvips engine
	engine    imaging.Engine // or this one
	webhooks  bool           // run a webhook dispatcher that may reach loopback
	h2c       bool           // also serve HTTP/2 without TLS
	hide      bool           // service.Config.HideForbidden
	log       *slog.Logger   // default: text to io.Discard
	accessLog *httpapi.AccessLogConfig
	metrics   httpapi.Config // its MetricsToken and MetricsElsewhere apply
	clamd     string         // scan uploads with the clamd at this address
	failOpen  bool           // store uploads unscanned when that clamd is unavailable
}

// newEnv starts the real handler over SQLite and disk blobs in a temp dir, on loopback.
func newEnv(t testing.TB, opts ...envOptions) *env {
	t.Helper()
	dir := t.TempDir()
	ctx := context.Background()
	m, err := sqlite.Open(ctx, filepath.Join(dir, "coffer.db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	d, err := fsblob.New(filepath.Join(dir, "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	blobs := blob.New(d)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if len(opts) > 0 && opts[0].log != nil {
		log = opts[0].log
	}
	db := meta.NewCounting(m)
	mc, err := cache.NewMeta(db, cache.DefaultMetaConfig())
	if err != nil {
		t.Fatal(err)
	}
	var o envOptions
	if len(opts) > 0 {
		o = opts[0]
	}
	cfg := service.DefaultConfig()
	cfg.SingleNode, cfg.HideForbidden = true, o.hide
	svc, err := service.New(cfg, mc, blobs, log)
	if err != nil {
		t.Fatal(err)
	}
	if o.images {
		icfg := imaging.DefaultConfig()
		icfg.Workers, icfg.Queue = 2, 8
		engine, err := vips.New(icfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { engine.Close() })
		svc.UseImages(engine)
	}
	if o.engine != nil {
		svc.UseImages(o.engine)
	}
	if o.webhooks {
		startWebhooks(t, svc, m)
	}
	if o.clamd != "" {
		useClamd(t, svc, m, o.clamd, o.failOpen)
	}
	if o.rules != "" {
		if err := svc.LoadRules(ctx, []byte(o.rules)); err != nil {
			t.Fatal(err)
		}
	}
	acfg := auth.DefaultConfig()
	acfg.AdminSecret, acfg.JWTSecret = adminSecret, o.jwtSecret
	authn, err := auth.New(acfg)
	if err != nil {
		t.Fatal(err)
	}
	signer, _ := auth.NewSigner("k1", map[string][]byte{"k1": bytes.Repeat([]byte("k"), 32)})
	srv := httptest.NewUnstartedServer(nil)
	mt := metrics.New()
	mt.Watch(metrics.Sources{DB: db, Meta: mc, Content: svc.Content(), Blobs: blobs})
	hcfg := httpapi.DefaultConfig()
	hcfg.PublicURL, hcfg.Version, hcfg.Metrics = "http://"+srv.Listener.Addr().String(), "test", mt
	if o.readIdle > 0 {
		hcfg.ReadIdleTimeout = o.readIdle
	}
	if o.writeTime > 0 {
		hcfg.WriteTimeout = o.writeTime
	}
	hcfg.MetricsToken, hcfg.MetricsElsewhere = o.metrics.MetricsToken, o.metrics.MetricsElsewhere
	if o.accessLog != nil {
		hcfg.AccessLog = *o.accessLog
	}
	h, err := httpapi.New(hcfg, svc, authn, signer, log)
	if err != nil {
		t.Fatal(err)
	}
	srv.Config.Handler = h
	srv.Listener, srv.Config.ConnContext = httpapi.Listener(srv.Listener), httpapi.ConnContext // as cmd/coffer serves
	srv.Config.Protocols = httpapi.Protocols(o.h2c)
	srv.Start()
	t.Cleanup(func() { srv.Close(); blobs.Close(); m.Close() })
	tt, _ := t.(*testing.T)
	return &env{t: tt, srv: srv, svc: svc, blobs: blobs, db: db, cache: mc, blobDir: filepath.Join(dir, "blobs")}
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
	ProcessedFiles []httpapi.FileMetadata `json:"processedFiles"`
}

// uploadOne uploads content as name into bucket and returns its metadata.
func (e *env) uploadOne(bucket, name string, content []byte) httpapi.FileMetadata {
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
	var e httpapi.ErrorBody
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
