package audit

import (
	"net/url"
	"time"

	"github.com/coffer/coffer"
)

// Config holds the audit log's settings.
type Config struct {
	Dir           string        // where audit.log, the rotated files and ship.cursor live
	MaxFileBytes  int64         // audit.log is rotated when the next record would pass this
	MaxTotalBytes int64         // oldest rotated files are deleted while all files pass this
	Buffer        int           // records queued for the writer; when full, Write drops and counts
	FlushEvery    time.Duration // buffered records are written and fsynced this often
	Collector     CollectorConfig
}

// CollectorConfig is where, and how, the log is shipped; URL "" ships nowhere.
type CollectorConfig struct {
	URL           string            // http(s) endpoint receiving POSTs of application/x-ndjson
	Batch         int               // records per POST at most
	MaxBatchBytes int64             // body bytes per POST at most (a longer single record goes alone)
	FlushEvery    time.Duration     // how long a partial batch may wait for more records
	Headers       map[string]string // sent with every POST (Authorization, ...)
	Timeout       time.Duration     // one POST, connect to last response byte
}

// DefaultConfig returns the defaults: 64 MiB files, 1 GiB in all, 8192 queued
// records, fsync every second; batches of 1000 records or 4 MiB, 10 s per POST.
func DefaultConfig() Config {
	return Config{MaxFileBytes: 64 << 20, MaxTotalBytes: 1 << 30, Buffer: 8192, FlushEvery: time.Second,
		Collector: CollectorConfig{Batch: 1000, MaxBatchBytes: 4 << 20, FlushEvery: time.Second,
			Timeout: 10 * time.Second}}
}

// Validate checks c.
func (c Config) Validate() error {
	switch {
	case c.Dir == "":
		return coffer.Errorf(coffer.EINVALID, "audit log directory is not set")
	case c.MaxFileBytes < 4<<10:
		return coffer.Errorf(coffer.EINVALID, "audit log file size must be at least 4 KiB")
	case c.MaxTotalBytes < 2*c.MaxFileBytes:
		return coffer.Errorf(coffer.EINVALID, "audit log total size must be at least twice the file size")
	case c.Buffer < 1 || c.Buffer > 1<<24:
		return coffer.Errorf(coffer.EINVALID, "audit log buffer must be between 1 and 16777216 records")
	case c.FlushEvery < time.Millisecond || c.FlushEvery > time.Minute:
		return coffer.Errorf(coffer.EINVALID, "audit log flush interval must be between 1ms and 1m")
	}
	if c.Collector.URL == "" {
		return nil
	}
	return c.Collector.validate()
}

// validate checks a collector that is set.
func (c CollectorConfig) validate() error {
	u, err := url.Parse(c.URL)
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return coffer.Errorf(coffer.EINVALID, "audit collector URL must be an absolute http(s) URL")
	case c.Batch < 1 || c.Batch > 1_000_000:
		return coffer.Errorf(coffer.EINVALID, "audit collector batch must be between 1 and 1000000 records")
	case c.MaxBatchBytes < 1<<10:
		return coffer.Errorf(coffer.EINVALID, "audit collector batch bytes must be at least 1 KiB")
	case c.FlushEvery < time.Millisecond || c.FlushEvery > time.Hour:
		return coffer.Errorf(coffer.EINVALID, "audit collector flush interval must be between 1ms and 1h")
	case c.Timeout < 10*time.Millisecond || c.Timeout > 10*time.Minute:
		return coffer.Errorf(coffer.EINVALID, "audit collector timeout must be between 10ms and 10m")
	}
	return nil
}
