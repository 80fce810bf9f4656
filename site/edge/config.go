package edge

import (
	"errors"
	"syscall"
	"time"
)

// Config is the edge cache's settings.
type Config struct {
	// Dir holds the cached bodies and their sidecar metadata (created if missing).
	Dir string
	// MaxBytes bounds the body bytes on disk, fills in progress included (their
	// space is reserved before it is written).
	MaxBytes int64
	// MaxObjectSize is the largest object kept: a bigger one (by Content-Length) is
	// streamed through without caching; one without Content-Length that grows past
	// it fails its fill (see package doc).
	MaxObjectSize int64
	// MaxNegative bounds the remembered upstream 404s (oldest forgotten first).
	MaxNegative int
	// BreakerFailures consecutive origin failures open an origin's circuit breaker.
	BreakerFailures int
	// BreakerCooldown is the first open period; each failed probe doubles it up to
	// BreakerMaxCooldown.
	BreakerCooldown    time.Duration
	BreakerMaxCooldown time.Duration
	// MaxOpenFiles bounds the entries that keep their body file open between hits
	// (0: an eighth of the process's descriptor limit, between 64 and 8,192; the
	// content cache of /v1 keeps up to half, which leaves at least three eighths to
	// connections, uploads and the stores).
	MaxOpenFiles int
	// Now is the clock (nil: time.Now); tests move it.
	Now func() time.Time
}

// DefaultConfig returns the defaults: 1 GiB on disk, objects up to 256 MiB.
func DefaultConfig() Config {
	return Config{
		MaxBytes:           1 << 30,
		MaxObjectSize:      256 << 20,
		MaxNegative:        100000,
		BreakerFailures:    5,
		BreakerCooldown:    time.Second,
		BreakerMaxCooldown: time.Minute,
	}
}

// Validate reports a setting out of range.
func (c Config) Validate() error {
	switch {
	case c.Dir == "":
		return errors.New("edge: Dir is required")
	case c.MaxBytes <= 0:
		return errors.New("edge: MaxBytes must be positive")
	case c.MaxObjectSize <= 0 || c.MaxObjectSize > c.MaxBytes:
		return errors.New("edge: MaxObjectSize must be positive and at most MaxBytes")
	case c.MaxOpenFiles < 0:
		return errors.New("edge: MaxOpenFiles must not be negative")
	case c.MaxNegative < 0:
		return errors.New("edge: MaxNegative must not be negative")
	case c.BreakerFailures <= 0:
		return errors.New("edge: BreakerFailures must be positive")
	case c.BreakerCooldown <= 0 || c.BreakerMaxCooldown < c.BreakerCooldown:
		return errors.New("edge: BreakerCooldown must be positive and at most BreakerMaxCooldown")
	}
	return nil
}

// maxOpenFiles is MaxOpenFiles or its default.
func (c Config) maxOpenFiles() int {
	if c.MaxOpenFiles > 0 {
		return c.MaxOpenFiles
	}
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return 256
	}
	return int(min(max(rl.Cur/8, 64), 8192))
}

func (c Config) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}
