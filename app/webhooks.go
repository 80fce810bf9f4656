package app

import (
	"context"
	"fmt"
	"net/netip"

	"github.com/coffer/coffer/webhook"
)

// dispatcher returns the dispatcher and SSRF guard settings of c.
func (c *WebhookConfig) dispatcher() (webhook.Config, webhook.GuardConfig, error) {
	d := webhook.DefaultConfig()
	d.Timeout, d.MaxAttempts, d.Workers, d.Retention = c.Timeout, c.MaxAttempts, c.Workers, c.Retention
	var g webhook.GuardConfig
	for _, n := range c.AllowNetworks {
		p, err := netip.ParsePrefix(n)
		if err != nil {
			return d, g, fmt.Errorf("--webhook-allow-networks: %q is not a CIDR prefix like 127.0.0.0/8", n)
		}
		g.Allow = append(g.Allow, p.Masked())
	}
	return d, g, d.Validate()
}

// buildWebhooks builds this node's dispatcher of the metadata database's outbox and
// the SSRF guard every tenant's webhook URLs are checked by.
func (s *Main) buildWebhooks() error {
	dcfg, gcfg, err := s.cfg.Webhooks.dispatcher()
	if err != nil {
		return err
	}
	dcfg.SingleNode = s.cfg.UsesSQLite()
	if s.parts.Webhooks != nil {
		s.parts.Webhooks(&dcfg)
	}
	guard := webhook.NewGuard(gcfg, s.parts.Resolver, nil)
	d, err := webhook.New(dcfg, s.st.outbox, guard.Client(dcfg.Timeout), s.log)
	if err != nil {
		return err
	}
	s.st.outbox.OnEvent(d.Wake)
	s.checkWebhookURL = guard.CheckTarget
	s.guardTransport = guard.Client(dcfg.Timeout).Transport
	s.webhooks = d
	return nil
}

// runWebhooks delivers until ctx ends; the returned channel closes when in-flight
// attempts have finished.
func (s *Main) runWebhooks(ctx context.Context) <-chan struct{} {
	done := make(chan struct{})
	go func() { s.webhooks.Run(ctx); close(done) }()
	return done
}
