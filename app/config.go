package app

import (
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/coffer/coffer/imaging"
	"github.com/coffer/coffer/internal/httpserve"
	"github.com/coffer/coffer/service"
	"github.com/coffer/coffer/sites"
	"github.com/coffer/coffer/virusscan/clamd"
	"github.com/coffer/coffer/webhook"
)

// Config is everything a running coffer is built from. cmd/coffer fills it from flags
// and environment; tests fill it by hand. Error messages name the `coffer serve`
// flags, the only way users set these.
type Config struct {
	Listen           string
	DataDir          string
	AdminSecret      string
	DatabaseURL      string
	S3Endpoint       string
	S3Bucket         string
	S3Region         string
	S3AccessKey      string
	S3SecretKey      string
	S3PathStyle      bool
	PublicURL        string
	PresignSecret    string
	PresignPrevious  []string
	UnauthorizedRole string
	RulesFile        string
	JWTSecret        string
	ShutdownTimeout  time.Duration
	SweepInterval    time.Duration
	StaleUploadAfter time.Duration
	ContentCacheSize int64
	ContentCacheMax  int64
	MetaCacheFiles   int
	MetaCacheTTL     time.Duration
	ImageWorkers     int
	ImageQueue       int
	ImageMaxPixels   int64
	ImageMaxBytes    int64
	ImageWorker      string
	ImageWorkerIdle  time.Duration
	ImageMaxCost     int64
	ImageTimeout     time.Duration
	ImageUserWorkers int
	ImageUserQueue   int

	// ImageWorkersRemote lists coffer-imager workers on the network
	// (remote.ParseAddrs); empty: a child process. The secret and TLS files reach them.
	ImageWorkersRemote  string
	ImageWorkersSecret  string
	ImageWorkersTLSCA   string
	ImageWorkersTLSCert string
	ImageWorkersTLSKey  string

	VariantCacheSize int64
	VariantsPerFile  int
	H2C              bool
	// FastPath answers plain HTTP/1.1 GETs and HEADs of files on httpserve's fast
	// path instead of net/http.
	FastPath       bool
	Webhooks       WebhookConfig
	Compat         CompatConfig
	AccessLog      string
	AccessLogReads int
	MetricsListen  string
	MetricsToken   string
	// DebugListen serves net/http/pprof on its own listener; empty = off.
	DebugListen string
	ClamAV      ClamAVConfig
	// Tenants is the multi-tenancy settings (off: one implicit tenant).
	Tenants TenantsConfig
	// Sites is the settings of sites: host-routed static sites and upstream
	// origins with a pull-through cache and an audit log.
	Sites sites.Config
	// Console serves the web console at /console/ (on every tenant's hosts too).
	Console bool
	// Version is reported by the API and the start-up log.
	Version string
}

// WebhookConfig is the settings of webhook deliveries.
type WebhookConfig struct {
	Timeout       time.Duration
	MaxAttempts   int
	Workers       int
	Retention     time.Duration
	AllowNetworks []string
}

// CompatConfig holds the settings of how closely the /v1 face follows hasura-storage.
type CompatConfig struct {
	JWTAdminRole  bool
	HideForbidden bool
	ETag          string // the hash of upload ETags: service.ETagMD5 (hasura-storage's) or ETagBLAKE3
}

// ClamAVConfig is the settings of virus scanning.
type ClamAVConfig struct {
	Addr     string
	FailOpen bool
	Timeout  time.Duration
}

// DefaultConfig returns the defaults of `coffer serve`: SQLite and disk blobs in
// ./data, listening on 127.0.0.1:8000.
func DefaultConfig() Config {
	icfg, wcfg, alog := imaging.DefaultConfig(), webhook.DefaultConfig(), httpserve.DefaultAccessLogConfig()
	return Config{
		Listen: "127.0.0.1:8000", DataDir: "./data", S3Region: "us-east-1", S3PathStyle: true,
		UnauthorizedRole: "public", ShutdownTimeout: 30 * time.Second, SweepInterval: time.Hour,
		StaleUploadAfter: 24 * time.Hour, ContentCacheSize: 256 << 20, ContentCacheMax: 1 << 20,
		MetaCacheFiles: 100_000, MetaCacheTTL: 5 * time.Minute,
		ImageWorkers: icfg.Workers, ImageQueue: icfg.Queue, ImageMaxPixels: icfg.MaxSourcePixels,
		ImageMaxBytes: icfg.MaxSourceBytes, ImageWorkerIdle: 5 * time.Minute, ImageMaxCost: icfg.MaxCost,
		ImageTimeout: icfg.Timeout, ImageUserQueue: icfg.UserQueue,
		VariantCacheSize: 64 << 20, VariantsPerFile: 20,
		Webhooks: WebhookConfig{Timeout: wcfg.Timeout, MaxAttempts: wcfg.MaxAttempts, Workers: wcfg.Workers,
			Retention: wcfg.Retention},
		Compat:    CompatConfig{JWTAdminRole: true, ETag: service.ETagMD5},
		AccessLog: alog.Mode, AccessLogReads: alog.ReadsPerSecond,
		ClamAV:  ClamAVConfig{Timeout: clamd.DefaultConfig().Timeout},
		Version: "dev", FastPath: true, Console: true, Tenants: TenantsConfig{MaxGraphs: 256, MetricsLabels: 50},
		Sites: sites.DefaultConfig(),
	}
}

// Validate checks c and fills in what derives from other settings: the metrics and
// debug addresses (127.0.0.1 for a port alone) and the public URL (http://<listen>).
func (c *Config) Validate() error {
	if c.S3Endpoint != "" && c.S3Bucket == "" {
		return fmt.Errorf("--s3-bucket is required with --s3-endpoint")
	}
	if c.DatabaseURL != "" && !strings.HasPrefix(c.DatabaseURL, "postgres://") && !strings.HasPrefix(c.DatabaseURL, "postgresql://") {
		return fmt.Errorf("--database-url must start with postgres:// (empty selects SQLite)")
	}
	if c.PresignSecret != "" && len(c.PresignSecret) < 32 {
		return fmt.Errorf("--presign-secret must be at least 32 bytes")
	}
	if c.Compat.ETag != service.ETagMD5 && c.Compat.ETag != service.ETagBLAKE3 {
		return fmt.Errorf("--etag must be %s or %s, not %q", service.ETagMD5, service.ETagBLAKE3, c.Compat.ETag)
	}
	if c.MetricsListen != "" {
		addr, err := sideAddr("--metrics-listen", c.MetricsListen)
		if err != nil {
			return err
		}
		c.MetricsListen = addr
	}
	if err := c.validateDebugListen(); err != nil {
		return err
	}
	if err := c.Sites.Validate(); err != nil {
		return err
	}
	if c.PublicURL == "" {
		c.PublicURL = "http://" + c.Listen
	}
	return nil
}

// UsesSQLite reports whether the metadata lives in the data dir.
func (c *Config) UsesSQLite() bool { return c.DatabaseURL == "" }

// sideAddr returns the address of a side listener (--metrics-listen, --debug-listen),
// on 127.0.0.1 when it names only a port: metrics and profiles say much about a
// server and should not reach the network unasked. flag names it in errors.
func sideAddr(flag, a string) (string, error) {
	if !strings.Contains(a, ":") {
		a = ":" + a
	}
	host, port, err := net.SplitHostPort(a)
	if err != nil || port == "" {
		return "", fmt.Errorf("%s: %q is not host:port or a port", flag, a)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port), nil
}

// accessLog returns the access log settings.
func (c *Config) accessLog() httpserve.AccessLogConfig {
	return httpserve.AccessLogConfig{Mode: c.AccessLog, ReadsPerSecond: c.AccessLogReads}
}
