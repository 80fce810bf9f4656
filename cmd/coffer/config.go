package main

import (
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/coffer/coffer/httpapi"
	"github.com/coffer/coffer/imaging"
	"github.com/spf13/pflag"
)

// serveConfig is everything `coffer serve` reads from flags and environment.
type serveConfig struct {
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
	LogLevel         string
	LogFormat        string
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
	VariantCacheSize int64
	VariantsPerFile  int
	GCHeapFloor      int64
	H2C              bool
	Webhooks         webhookConfig
	Compat           compatConfig
	AccessLog        string
	AccessLogReads   int
	MetricsListen    string
	MetricsToken     string
	ClamAV           clamavConfig
}

func (c *serveConfig) storeFlags(fs *pflag.FlagSet) {
	fs.StringVar(&c.DataDir, "data-dir", "./data", "directory for the SQLite file and local blobs")
	fs.StringVar(&c.DatabaseURL, "database-url", "", "postgres://... selects PostgreSQL; empty = SQLite in the data dir")
	fs.StringVar(&c.S3Endpoint, "s3-endpoint", "", "S3 endpoint (http://host:port or https://...); empty = local disk")
	fs.StringVar(&c.S3Bucket, "s3-bucket", "", "S3 bucket holding the blobs (created if missing)")
	fs.StringVar(&c.S3Region, "s3-region", "us-east-1", "S3 region")
	fs.StringVar(&c.S3AccessKey, "s3-access-key", "", "S3 access key")
	fs.StringVar(&c.S3SecretKey, "s3-secret-key", "", "S3 secret key")
	fs.BoolVar(&c.S3PathStyle, "s3-path-style", true, "use path-style S3 URLs (MinIO, SeaweedFS, Ceph); false = virtual-hosted")
	fs.StringVar(&c.LogLevel, "log-level", "info", "log level: debug, info, warn, error")
	fs.StringVar(&c.LogFormat, "log-format", "json", "log format: json or text")
}

func (c *serveConfig) serveFlags(fs *pflag.FlagSet) {
	fs.StringVar(&c.Listen, "listen", "127.0.0.1:8000", "address to listen on")
	fs.StringVar(&c.AdminSecret, "admin-secret", "", "requests with header x-hasura-admin-secret: <this> are admin")
	fs.StringVar(&c.PublicURL, "public-url", "", "base URL clients use to reach this server (for presigned URLs); default http://<listen>")
	fs.StringVar(&c.PresignSecret, "presign-secret", "", "key (>= 32 bytes) signing presigned URLs; default: derived from the admin secret, else a random key kept in the data dir")
	fs.StringSliceVar(&c.PresignPrevious, "presign-previous-secrets", nil, "earlier presign keys still accepted, so rotation keeps unexpired URLs valid")
	fs.StringVar(&c.UnauthorizedRole, "unauthorized-role", "public", "role of requests without credentials")
	fs.StringVar(&c.JWTSecret, "jwt-secret", "", `Hasura JWT config JSON: {"type":"HS256","key":"..."}, {"type":"RS256","key":"-----BEGIN PUBLIC KEY..."} or {"jwk_url":"https://..."}`)
	fs.StringVar(&c.RulesFile, "rules", "", "permission rules file (YAML or JSON); replaces the stored rules at start. Empty: keep the stored rules")
	fs.BoolVar(&c.H2C, "h2c", false, "also accept HTTP/2 without TLS (prior knowledge, as proxies such as Envoy send it) on the same port as HTTP/1.1")
	fs.DurationVar(&c.ShutdownTimeout, "shutdown-timeout", 30*time.Second, "how long SIGTERM waits for in-flight requests")
	fs.DurationVar(&c.SweepInterval, "sweep-interval", time.Hour, "how often abandoned uploads and orphan blobs are swept")
	fs.Int64Var(&c.ContentCacheSize, "content-cache-size", 256<<20, "bytes of small, hot file contents cached (in memory; disk blobs from 16 KB up are kept open and sent with sendfile); 0 disables")
	fs.Int64Var(&c.ContentCacheMax, "content-cache-max-file", 1<<20, "largest file (bytes) the content cache holds; larger files always stream")
	fs.IntVar(&c.MetaCacheFiles, "meta-cache-files", 100_000, "file metadata rows cached in memory (bucket settings: up to 10,000)")
	fs.DurationVar(&c.MetaCacheTTL, "meta-cache-ttl", 5*time.Minute, "safety-net TTL of cached metadata (changes invalidate at once; across nodes via PostgreSQL NOTIFY)")
	icfg := imaging.DefaultConfig()
	fs.IntVar(&c.ImageWorkers, "image-workers", icfg.Workers, "image transformations running at once; one per CPU unless set")
	fs.IntVar(&c.ImageQueue, "image-queue", icfg.Queue, "image transformations waiting for a worker; beyond this, 503 with Retry-After")
	fs.Int64Var(&c.ImageMaxPixels, "image-max-pixels", icfg.MaxSourcePixels, "largest source image (width x height) that is transformed, checked before decoding")
	fs.Int64Var(&c.ImageMaxBytes, "image-max-bytes", icfg.MaxSourceBytes, "largest source image file (bytes) that is transformed")
	fs.StringVar(&c.ImageWorker, "image-worker", "", "the coffer-imager binary that transforms images (it links libvips; coffer does not); default: next to coffer, else on $PATH. Missing: transformations answer 501")
	fs.DurationVar(&c.ImageWorkerIdle, "image-worker-idle", 5*time.Minute, "stop the image worker after this long without transformations (the next one starts it again); 0 = never")
	fs.Int64Var(&c.ImageMaxCost, "image-max-cost", icfg.MaxCost, "cost budget of one image transformation (estimated CPU ns: source pixels, frames, output pixels, output pixels x blur sigma), checked before decoding; beyond it, 400")
	fs.DurationVar(&c.ImageTimeout, "image-timeout", icfg.Timeout, "wall-clock limit of one image transformation once it has a worker; beyond it its computation is killed and it answers 503")
	fs.IntVar(&c.ImageUserWorkers, "image-user-workers", 0, "image workers one user (JWT user id; admin; else client IP) may hold at once; 0 = half of --image-workers, at least 1")
	fs.IntVar(&c.ImageUserQueue, "image-user-queue", icfg.UserQueue, "image transformations of one user that may wait for a worker; beyond this, 429 with Retry-After")
	fs.Int64Var(&c.VariantCacheSize, "variant-cache-size", 64<<20, "bytes of transformed images kept in memory (they are also kept in the blob store); 0 disables the memory tier")
	fs.IntVar(&c.VariantsPerFile, "variants-per-file", 20, "transformed variants kept in the blob store per file; more are kept in memory only")
	c.Webhooks.flags(fs)
	c.Compat.flags(fs)
	c.ClamAV.flags(fs)
	fs.Int64Var(&c.GCHeapFloor, "gc-heap-floor", 16<<20, "bytes of heap the garbage collector lets grow before it runs while the live heap is small (GOGC raised up to 400; back to 100 as the live heap and goroutine stacks grow); 0 = Go's default (4 MB). Ignored when GOGC is set")
	hcfg := httpapi.DefaultConfig()
	fs.StringVar(&c.AccessLog, "access-log", hcfg.AccessLog.Mode, "access log lines (INFO \"request\"): on = every error (status >= 400) and write, and successful GET/HEAD up to --access-log-reads-per-sec; errors = status >= 400 only; off")
	fs.IntVar(&c.AccessLogReads, "access-log-reads-per-sec", hcfg.AccessLog.ReadsPerSecond, "with --access-log on: successful GET/HEAD lines per second at most; the next line logged counts those left out (\"skipped\"); 0 = log every request")
	fs.StringVar(&c.MetricsListen, "metrics-listen", "", "serve /metrics on this address instead of the API port (a port alone, like :9090, binds 127.0.0.1)")
	fs.StringVar(&c.MetricsToken, "metrics-token", "", "bearer token that may read /metrics (Authorization: Bearer <token>): on the API port besides admins, on --metrics-listen the only way in")
	fs.DurationVar(&c.StaleUploadAfter, "stale-upload-after", 24*time.Hour, "an unfinished upload older than this is abandoned (PostgreSQL; with SQLite all are at start)")
}

func (c *serveConfig) validate() error {
	if c.S3Endpoint != "" && c.S3Bucket == "" {
		return fmt.Errorf("--s3-bucket is required with --s3-endpoint")
	}
	if c.DatabaseURL != "" && !strings.HasPrefix(c.DatabaseURL, "postgres://") && !strings.HasPrefix(c.DatabaseURL, "postgresql://") {
		return fmt.Errorf("--database-url must start with postgres:// (empty selects SQLite)")
	}
	if c.PresignSecret != "" && len(c.PresignSecret) < 32 {
		return fmt.Errorf("--presign-secret must be at least 32 bytes")
	}
	if c.MetricsListen != "" {
		addr, err := metricsAddr(c.MetricsListen)
		if err != nil {
			return err
		}
		c.MetricsListen = addr
	}
	if c.PublicURL == "" {
		c.PublicURL = "http://" + c.Listen
	}
	return nil
}

// usesSQLite reports whether the metadata lives in the data dir.
func (c *serveConfig) usesSQLite() bool { return c.DatabaseURL == "" }

// metricsAddr returns the --metrics-listen address, on 127.0.0.1 when it names only
// a port: metrics say much about a server and should not reach the network unasked.
func metricsAddr(a string) (string, error) {
	if !strings.Contains(a, ":") {
		a = ":" + a
	}
	host, port, err := net.SplitHostPort(a)
	if err != nil || port == "" {
		return "", fmt.Errorf("--metrics-listen: %q is not host:port or a port", a)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port), nil
}

// accessLog returns the access log settings.
func (c *serveConfig) accessLog() httpapi.AccessLogConfig {
	return httpapi.AccessLogConfig{Mode: c.AccessLog, ReadsPerSecond: c.AccessLogReads}
}
