package main

import (
	"context"
	"fmt"
	"net/netip"
	"time"

	"github.com/coffer/coffer/service"
	"github.com/coffer/coffer/webhook"
	"github.com/spf13/pflag"
)

// webhookConfig is what `coffer serve` reads for webhook deliveries.
type webhookConfig struct {
	Timeout       time.Duration
	MaxAttempts   int
	Workers       int
	Retention     time.Duration
	AllowNetworks []string
}

func (c *webhookConfig) flags(fs *pflag.FlagSet) {
	d := webhook.DefaultConfig()
	fs.DurationVar(&c.Timeout, "webhook-timeout", d.Timeout, "one webhook delivery attempt, connect to response")
	fs.IntVar(&c.MaxAttempts, "webhook-max-attempts", d.MaxAttempts, "attempts before a delivery is dead (backoff doubles from 1s, capped at 1h, with jitter)")
	fs.IntVar(&c.Workers, "webhook-workers", d.Workers, "webhook deliveries in flight at once on this node")
	fs.DurationVar(&c.Retention, "webhook-retention", d.Retention, "how long delivered and dead deliveries stay in the delivery log")
	fs.StringSliceVar(&c.AllowNetworks, "webhook-allow-networks", nil,
		"networks (CIDR) webhooks may reach although they are loopback/private/link-local, e.g. 127.0.0.0/8 for local development; by default all such targets are refused")
}

func (c *webhookConfig) dispatcher() (webhook.Config, webhook.GuardConfig, error) {
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

// buildWebhooks wires subscription administration and this node's dispatcher to the
// metadata database's outbox.
func (s *server) buildWebhooks(svc *service.Service) error {
	dcfg, gcfg, err := s.cfg.Webhooks.dispatcher()
	if err != nil {
		return err
	}
	dcfg.SingleNode = s.cfg.usesSQLite()
	guard := webhook.NewGuard(gcfg, nil, nil)
	d, err := webhook.New(dcfg, s.st.outbox, guard.Client(dcfg.Timeout), s.log)
	if err != nil {
		return err
	}
	s.st.outbox.OnEvent(d.Wake)
	svc.SetWebhooks(service.Webhooks{Outbox: s.st.outbox, CheckURL: guard.CheckTarget})
	s.webhooks = d
	return nil
}

// runWebhooks delivers until ctx ends; the returned channel closes when in-flight
// attempts have finished.
func (s *server) runWebhooks(ctx context.Context) <-chan struct{} {
	done := make(chan struct{})
	go func() { s.webhooks.Run(ctx); close(done) }()
	return done
}
