package main

import (
	"github.com/coffer/coffer/app"
	"github.com/spf13/pflag"
)

// webhookFlags registers the flags of webhook deliveries into c.
func webhookFlags(fs *pflag.FlagSet, c *app.WebhookConfig) {
	d := app.DefaultConfig().Webhooks
	fs.DurationVar(&c.Timeout, "webhook-timeout", d.Timeout, "one webhook delivery attempt, connect to response")
	fs.IntVar(&c.MaxAttempts, "webhook-max-attempts", d.MaxAttempts, "attempts before a delivery is dead (backoff doubles from 1s, capped at 1h, with jitter)")
	fs.IntVar(&c.Workers, "webhook-workers", d.Workers, "webhook deliveries in flight at once on this node")
	fs.DurationVar(&c.Retention, "webhook-retention", d.Retention, "how long delivered and dead deliveries stay in the delivery log")
	fs.StringSliceVar(&c.AllowNetworks, "webhook-allow-networks", nil,
		"networks (CIDR) webhooks may reach although they are loopback/private/link-local, e.g. 127.0.0.0/8 for local development; by default all such targets are refused")
}
