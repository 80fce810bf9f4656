package sites

import (
	"fmt"
	"net/url"
	"time"
)

// Config is the settings of sites (--sites and the flags beside it).
type Config struct {
	// On serves sites: a request whose host is a site's goes to the site.
	On bool
	// EdgeDir is the pull-through cache's directory ("" = <data dir>/edge);
	// EdgeSize bounds its bytes on disk and EdgeMaxObject one object (larger ones are
	// streamed through, not kept).
	EdgeDir       string
	EdgeSize      int64
	EdgeMaxObject int64
	// AuditDir is the audit log's directory ("" = <data dir>/audit; "-" = off);
	// AuditSize bounds its files' total; AuditCollector, when set, is the URL the
	// records are shipped to in batches.
	AuditDir       string
	AuditSize      int64
	AuditCollector string
	// Refresh is how often every node reads the sites again (changes on another
	// node arrive sooner through the invalidation bus on PostgreSQL).
	Refresh time.Duration
}

// Validate checks c.
func (c Config) Validate() error {
	if !c.On {
		return nil
	}
	if c.EdgeSize <= 0 || c.EdgeMaxObject <= 0 || c.AuditSize <= 0 || c.Refresh <= 0 {
		return fmt.Errorf("--edge-cache-size, --edge-max-object, --audit-size and --sites-refresh must be > 0")
	}
	if c.AuditCollector != "" {
		if u, err := url.Parse(c.AuditCollector); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("--audit-collector must be an http(s) URL")
		}
	}
	return nil
}

// DefaultConfig returns the default settings: sites on, a 1 GiB edge cache keeping
// objects up to 256 MiB, a 1 GiB audit log, the sites read again every 5 s.
func DefaultConfig() Config {
	return Config{On: true, EdgeSize: 1 << 30, EdgeMaxObject: 256 << 20, AuditSize: 1 << 30, Refresh: 5 * time.Second}
}
