// Package hasura serves coffer's hasura-storage-compatible /v1 HTTP API.
package hasura

import (
	_ "embed"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/auth"
	"github.com/coffer/coffer/internal/httpserve"
	"github.com/coffer/coffer/metrics"
)

//go:embed openapi.yaml
var openapiYAML []byte

// Config holds the HTTP API settings.
type Config struct {
	PublicURL string // base URL clients reach this server at, for presigned URLs
	MaxRanges int    // Range headers with more ranges are ignored (whole file served)
	Version   string
	// Metrics, when set, records every request and is served at GET /metrics, unless
	// MetricsElsewhere (another listener serves it). On the API port it is served
	// only to admins and, when MetricsToken is set, to "Authorization: Bearer
	// <token>" (that request is not authenticated as an API request).
	Metrics          *metrics.Metrics
	MetricsElsewhere bool
	MetricsToken     string
	// Slow clients: a request body read stalls at most ReadIdleTimeout; a response
	// must be written within WriteTimeout, plus its size at MinWriteRate for files.
	ReadIdleTimeout time.Duration
	WriteTimeout    time.Duration
	MinWriteRate    int64 // bytes per second
	AccessLog       httpserve.AccessLogConfig
}

// DefaultConfig returns the defaults.
func DefaultConfig() Config {
	return Config{PublicURL: "http://127.0.0.1:8000", MaxRanges: 16, Version: "dev",
		ReadIdleTimeout: time.Minute, WriteTimeout: time.Minute, MinWriteRate: 64 << 10,
		AccessLog: httpserve.DefaultAccessLogConfig()}
}

// Validate checks c.
func (c Config) Validate() error {
	if !strings.HasPrefix(c.PublicURL, "http://") && !strings.HasPrefix(c.PublicURL, "https://") {
		return coffer.Errorf(coffer.EINVALID, "public URL must start with http:// or https://")
	}
	if c.MaxRanges < 1 {
		return coffer.Errorf(coffer.EINVALID, "max ranges must be at least 1")
	}
	if c.ReadIdleTimeout <= 0 || c.WriteTimeout <= 0 || c.MinWriteRate <= 0 {
		return coffer.Errorf(coffer.EINVALID, "read idle timeout, write timeout and minimum write rate must be positive")
	}
	return c.AccessLog.Validate()
}

// Handler is the HTTP API.
type Handler struct {
	cfg    Config
	svc    Service
	authn  *auth.Authenticator
	signer *auth.Signer
	log    *slog.Logger
	mux    *http.ServeMux
	frame  *httpserve.Frame // serves every request: see newFrame
	// publicHost is PublicURL's host[:port], the host presigned URLs sign.
	publicHost string
}

// New returns the API handler.
func New(cfg Config, svc Service, authn *auth.Authenticator, signer *auth.Signer, log *slog.Logger) (*Handler, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.PublicURL = strings.TrimRight(cfg.PublicURL, "/")
	pu, err := url.Parse(cfg.PublicURL)
	if err != nil || pu.Host == "" {
		return nil, coffer.Errorf(coffer.EINVALID, "public URL %q has no host", cfg.PublicURL)
	}
	h := &Handler{cfg: cfg, svc: svc, authn: authn, signer: signer, log: log, mux: http.NewServeMux(), publicHost: pu.Host}
	h.routes()
	h.frame = h.newFrame()
	return h, nil
}

// ServeHTTP serves r through the face's httpserve.Frame; a HEAD request's error
// answers go out bare (headErrors).
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.frame.ServeHTTP(headOf(w, r), r)
}

// Prefixes are the paths the face answers on the port it shares with other faces
// (api.Router, where it is also the fallback): the /v1 API, the health check and the
// metrics.
func (h *Handler) Prefixes() []string { return []string{"/v1/", "/healthz", "/metrics"} }

func (h *Handler) routes() {
	m := httpserve.RouteMux{ServeMux: h.mux}
	m.HandleFunc("GET /healthz", h.healthz)
	m.HandleFunc("GET /v1/version", h.version)
	m.HandleFunc("GET /v1/openapi.yaml", h.openapi)
	if h.cfg.Metrics != nil && !h.cfg.MetricsElsewhere {
		m.HandleFunc("GET /metrics", h.serveMetrics(h.cfg.Metrics.Handler()))
	}

	m.HandleFunc("POST /v1/files", h.uploadFiles)
	m.HandleFunc("POST /v1/files/{$}", h.uploadFiles)
	m.HandleFunc("GET /v1/files/{id}", h.getFile)
	m.HandleFunc("HEAD /v1/files/{id}", h.getFile)
	m.HandleFunc("PUT /v1/files/{id}", h.replaceFile)
	m.HandleFunc("DELETE /v1/files/{id}", h.deleteFile)
	m.HandleFunc("GET /v1/files/{id}/metadata", h.getFileMetadata)
	m.HandleFunc("PATCH /v1/files/{id}/metadata", h.updateFileMetadata)
	m.HandleFunc("GET /v1/files/{id}/presignedurl", h.presignURL)
	m.HandleFunc("GET /v1/files/{id}/presignedurl/contents", h.presignedContents)
	m.HandleFunc("GET /v1/files/{id}/presignedurl/content", h.presignedContents)

	m.HandleFunc("GET /v1/buckets", h.listBuckets)
	m.HandleFunc("POST /v1/buckets", h.createBucket)
	m.HandleFunc("GET /v1/buckets/{id}", h.getBucket)
	m.HandleFunc("PATCH /v1/buckets/{id}", h.updateBucket)
	m.HandleFunc("DELETE /v1/buckets/{id}", h.deleteBucket)
	m.HandleFunc("GET /v1/buckets/{id}/files", h.listBucketFiles)

	m.HandleFunc("GET /v1/rules", h.getRules)
	m.HandleFunc("PUT /v1/rules", h.putRules)

	m.HandleFunc("GET /v1/webhooks", h.listWebhooks)
	m.HandleFunc("POST /v1/webhooks", h.createWebhook)
	m.HandleFunc("GET /v1/webhooks/{id}", h.getWebhook)
	m.HandleFunc("DELETE /v1/webhooks/{id}", h.deleteWebhook)
	m.HandleFunc("GET /v1/webhooks/{id}/deliveries", h.listDeliveries)
	m.HandleFunc("POST /v1/webhooks/{id}/deliveries/{delivery}/redeliver", h.redeliver)

	m.HandleFunc("POST /v1/ops/list-orphans", h.listOrphans)
	m.HandleFunc("POST /v1/ops/delete-orphans", h.deleteOrphans)
	m.HandleFunc("POST /v1/ops/list-broken-metadata", h.listBrokenMetadata)
	m.HandleFunc("POST /v1/ops/delete-broken-metadata", h.deleteBrokenMetadata)
	m.HandleFunc("POST /v1/ops/list-not-uploaded", h.listNotUploaded)
	m.HandleFunc("POST /v1/ops/sweep", h.sweep)
	m.HandleFunc("GET /v1/ops/virus-rejections", h.listVirusRejections)
}

func (h *Handler) healthz(w http.ResponseWriter, r *http.Request) {
	if err := h.svc.Ping(r.Context()); err != nil {
		writeError(w, r, coffer.Errorf(coffer.EUNAVAILABLE, "metadata store unreachable"))
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"healthz": "ok"})
}

func (h *Handler) version(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"buildVersion": h.cfg.Version})
}

func (h *Handler) openapi(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/yaml")
	_, _ = w.Write(openapiYAML)
}
