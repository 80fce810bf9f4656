package main

import (
	"github.com/coffer/coffer/app"
	"github.com/spf13/pflag"
)

// serveConfig is everything `coffer serve` reads from flags and environment: the
// server's app.Config and the process settings around it.
type serveConfig struct {
	app.Config
	LogLevel    string
	LogFormat   string
	GCHeapFloor int64
}

// storeFlags registers the flags that choose and reach the stores (serve and migrate).
func (c *serveConfig) storeFlags(fs *pflag.FlagSet) {
	d := app.DefaultConfig()
	fs.StringVar(&c.DataDir, "data-dir", d.DataDir, "directory for the SQLite file and local blobs")
	fs.StringVar(&c.DatabaseURL, "database-url", "", "postgres://... selects PostgreSQL; empty = SQLite in the data dir")
	fs.StringVar(&c.S3Endpoint, "s3-endpoint", "", "S3 endpoint (http://host:port or https://...); empty = local disk")
	fs.StringVar(&c.S3Bucket, "s3-bucket", "", "S3 bucket holding the blobs (created if missing)")
	fs.StringVar(&c.S3Region, "s3-region", d.S3Region, "S3 region")
	fs.StringVar(&c.S3AccessKey, "s3-access-key", "", "S3 access key")
	fs.StringVar(&c.S3SecretKey, "s3-secret-key", "", "S3 secret key")
	fs.BoolVar(&c.S3PathStyle, "s3-path-style", d.S3PathStyle, "use path-style S3 URLs (MinIO, SeaweedFS, Ceph); false = virtual-hosted")
	fs.StringVar(&c.LogLevel, "log-level", "info", "log level: debug, info, warn, error")
	fs.StringVar(&c.LogFormat, "log-format", "json", "log format: json or text")
}

// serveFlags registers the flags of serve alone.
func (c *serveConfig) serveFlags(fs *pflag.FlagSet) {
	d := app.DefaultConfig()
	fs.StringVar(&c.Listen, "listen", d.Listen, "address to listen on")
	fs.StringVar(&c.AdminSecret, "admin-secret", "", "requests with header x-hasura-admin-secret: <this> are admin")
	fs.StringVar(&c.PublicURL, "public-url", "", "base URL clients use to reach this server (for presigned URLs); default http://<listen>")
	fs.StringVar(&c.PresignSecret, "presign-secret", "", "key (>= 32 bytes) signing presigned URLs; default: derived from the admin secret, else a random key kept in the data dir")
	fs.StringSliceVar(&c.PresignPrevious, "presign-previous-secrets", nil, "earlier presign keys still accepted, so rotation keeps unexpired URLs valid")
	fs.StringVar(&c.UnauthorizedRole, "unauthorized-role", d.UnauthorizedRole, "role of requests without credentials")
	fs.StringVar(&c.JWTSecret, "jwt-secret", "", `Hasura JWT config JSON: {"type":"HS256","key":"..."}, {"type":"RS256","key":"-----BEGIN PUBLIC KEY..."} or {"jwk_url":"https://..."}`)
	fs.StringVar(&c.RulesFile, "rules", "", "permission rules file (YAML or JSON); replaces the stored rules at start. Empty: keep the stored rules")
	fs.BoolVar(&c.FastPath, "fast-path", true, "answer plain HTTP/1.1 GETs and HEADs of files without net/http (a strict parser; anything else goes to net/http)")
	fs.BoolVar(&c.Console, "console", d.Console, "serve the web console at /console/ (embedded; it calls the APIs with the credential its user signs in with); false: off")
	fs.BoolVar(&c.H2C, "h2c", false, "also accept HTTP/2 without TLS (prior knowledge, as proxies such as Envoy send it) on the same port as HTTP/1.1")
	fs.DurationVar(&c.ShutdownTimeout, "shutdown-timeout", d.ShutdownTimeout, "how long SIGTERM waits for in-flight requests")
	fs.DurationVar(&c.SweepInterval, "sweep-interval", d.SweepInterval, "how often abandoned uploads and orphan blobs are swept")
	fs.Int64Var(&c.ContentCacheSize, "content-cache-size", d.ContentCacheSize, "bytes of small, hot file contents cached (in memory; disk blobs from 16 KB up are kept open and sent with sendfile); 0 disables")
	fs.Int64Var(&c.ContentCacheMax, "content-cache-max-file", d.ContentCacheMax, "largest file (bytes) the content cache holds; larger files always stream")
	fs.IntVar(&c.MetaCacheFiles, "meta-cache-files", d.MetaCacheFiles, "file metadata rows cached in memory (bucket settings: up to 10,000)")
	fs.DurationVar(&c.MetaCacheTTL, "meta-cache-ttl", d.MetaCacheTTL, "safety-net TTL of cached metadata (changes invalidate at once; across nodes via PostgreSQL NOTIFY)")
	fs.IntVar(&c.ImageWorkers, "image-workers", d.ImageWorkers, "image transformations running at once; one per CPU unless set")
	fs.IntVar(&c.ImageQueue, "image-queue", d.ImageQueue, "image transformations waiting for a worker; beyond this, 503 with Retry-After")
	fs.Int64Var(&c.ImageMaxPixels, "image-max-pixels", d.ImageMaxPixels, "largest source image (width x height) that is transformed, checked before decoding")
	fs.Int64Var(&c.ImageMaxBytes, "image-max-bytes", d.ImageMaxBytes, "largest source image file (bytes) that is transformed")
	fs.StringVar(&c.ImageWorker, "image-worker", "", "the coffer-imager binary that transforms images (it links libvips; coffer does not); default: next to coffer, else on $PATH. Missing: transformations answer 501")
	fs.DurationVar(&c.ImageWorkerIdle, "image-worker-idle", d.ImageWorkerIdle, "stop the image worker after this long without transformations (the next one starts it again); 0 = never")
	fs.Int64Var(&c.ImageMaxCost, "image-max-cost", d.ImageMaxCost, "cost budget of one image transformation (estimated CPU ns: source pixels, frames, output pixels, output pixels x blur sigma), checked before decoding; beyond it, 400")
	fs.DurationVar(&c.ImageTimeout, "image-timeout", d.ImageTimeout, "wall-clock limit of one image transformation once it has a worker; beyond it its computation is killed and it answers 503")
	fs.IntVar(&c.ImageUserWorkers, "image-user-workers", d.ImageUserWorkers, "image workers one user (JWT user id; admin; else client IP) may hold at once; 0 = half of --image-workers, at least 1")
	fs.IntVar(&c.ImageUserQueue, "image-user-queue", d.ImageUserQueue, "image transformations of one user that may wait for a worker; beyond this, 429 with Retry-After")
	fs.StringVar(&c.ImageWorkersRemote, "image-workers-remote", "", "send image transformations to coffer-imager workers listening on the network (coffer-imager --listen) instead of a child process: host:port,... (http:// or tcp://; https:// or tls:// for TLS), least loaded first; --image-workers then bounds transformations at once over all of them")
	fs.StringVar(&c.ImageWorkersSecret, "image-workers-secret", "", "shared secret of the remote image workers (their --secret); proven by HMAC challenge-response, never sent")
	fs.StringVar(&c.ImageWorkersTLSCA, "image-workers-tls-ca", "", "CA (PEM) that signed the TLS certificates of https:// image workers; empty: the system's roots")
	fs.StringVar(&c.ImageWorkersTLSCert, "image-workers-tls-cert", "", "client certificate (PEM) presented to https:// image workers that require one (mTLS) ...")
	fs.StringVar(&c.ImageWorkersTLSKey, "image-workers-tls-key", "", "... and its key (PEM)")
	fs.Int64Var(&c.VariantCacheSize, "variant-cache-size", d.VariantCacheSize, "bytes of transformed images kept in memory (they are also kept in the blob store); 0 disables the memory tier")
	fs.IntVar(&c.VariantsPerFile, "variants-per-file", d.VariantsPerFile, "transformed variants kept in the blob store per file; more are kept in memory only")
	webhookFlags(fs, &c.Webhooks)
	compatFlags(fs, &c.Compat)
	clamavFlags(fs, &c.ClamAV)
	tenantFlags(fs, &c.Tenants)
	siteFlags(fs, &c.Sites)
	fs.Int64Var(&c.GCHeapFloor, "gc-heap-floor", 16<<20, "bytes of heap the garbage collector lets grow before it runs while the live heap is small (GOGC raised up to 400; back to 100 as the live heap and goroutine stacks grow); 0 = Go's default (4 MB). Ignored when GOGC is set")
	fs.StringVar(&c.AccessLog, "access-log", d.AccessLog, "access log lines (INFO \"request\"): on = every error (status >= 400) and write, and successful GET/HEAD up to --access-log-reads-per-sec; errors = status >= 400 only; off")
	fs.IntVar(&c.AccessLogReads, "access-log-reads-per-sec", d.AccessLogReads, "with --access-log on: successful GET/HEAD lines per second at most; the next line logged counts those left out (\"skipped\"); 0 = log every request")
	fs.StringVar(&c.MetricsListen, "metrics-listen", "", "serve /metrics on this address instead of the API port (a port alone, like :9090, binds 127.0.0.1)")
	fs.StringVar(&c.MetricsToken, "metrics-token", "", "bearer token that may read /metrics (Authorization: Bearer <token>): on the API port besides admins, on --metrics-listen the only way in")
	fs.StringVar(&c.DebugListen, "debug-listen", "", "serve net/http/pprof (/debug/pprof/) on this address, never on the API port (a port alone, like 6060, binds 127.0.0.1); off by default")
	fs.DurationVar(&c.StaleUploadAfter, "stale-upload-after", d.StaleUploadAfter, "an unfinished upload older than this is abandoned (PostgreSQL; with SQLite all are at start)")
}
