package app

import (
	"context"
	"fmt"
	"time"

	"github.com/coffer/coffer/virusscan/clamd"
)

// buildScanning builds the clamd client, if configured, and logs whether uploads
// are scanned.
func (s *Main) buildScanning(ctx context.Context) error {
	c := s.cfg.ClamAV
	if c.Addr == "" {
		s.log.Info("virus scanning off (no --clamav-addr)")
		return nil
	}
	cfg := clamd.DefaultConfig()
	cfg.Addr, cfg.Timeout = c.Addr, c.Timeout
	client, err := clamd.New(cfg)
	if err != nil {
		return fmt.Errorf("--clamav-addr: %w", err)
	}
	s.scanner = client
	pctx, cancel := context.WithTimeout(ctx, min(c.Timeout, 5*time.Second))
	defer cancel()
	if err := client.Ping(pctx); err != nil {
		s.log.Warn("virus scanning on, but clamd does not answer yet", "clamav_addr", c.Addr, "fail_open", c.FailOpen, "err", err)
		return nil
	}
	s.log.Info("virus scanning on", "clamav_addr", c.Addr, "fail_open", c.FailOpen, "timeout", c.Timeout.String())
	return nil
}
