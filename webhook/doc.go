// Package webhook sends the events of the transactional outbox to subscribers'
// URLs, signed, retried and never to an internal network.
//
// # The outbox and the dispatcher
//
// The metadata stores write an event in the same transaction as the change it
// describes, with one pending delivery per subscription that matches it
// (meta.Outbox), so an event exists exactly when its change committed. Its body is
// encoded once, by webhook/payload, and sent as stored. A Dispatcher claims due
// deliveries (ClaimDeliveries, up to its free workers), POSTs each one and records
// the outcome (FinishDelivery). Several dispatchers, on one node or many, share an
// outbox: a claim is a lease of one attempt's timeout plus a margin, so a delivery
// whose node died is due again when the lease ends; a single node (SQLite,
// Config.SingleNode) releases its own leftover claims at start instead. The store
// wakes the dispatcher when an event commits (Wake); a poll catches the rest, and
// finished deliveries are pruned after Config.Retention.
//
// # Signed deliveries
//
// Each POST carries the event's id and type, the delivery's id and attempt number,
// and SignatureHeader: "t=<unix seconds>,v1=<hex>", HMAC-SHA256 with the
// subscription's secret over "<t>.<body>" (Sign). Receivers check it with Verify
// (or the same few lines in any language), which accepts several v1 values for
// secret rotation and refuses timestamps outside a tolerance, so that a captured
// delivery cannot be replayed later.
//
// # Retries, backoff and dead letters
//
// A 2xx answer delivers. Anything else (another status, a timeout, a refused
// target) fails the attempt: the delivery is due again after BackoffBase·2^(n-1),
// capped at BackoffMax, with equal jitter (between half and all of the delay) so a
// receiver coming back up is not hit by every retry at once; a longer Retry-After
// is honoured up to BackoffMax. After MaxAttempts the delivery is dead: it stays in
// the delivery log with its last status and error (and is logged as a warning):
// an admin can redeliver it (meta.Outbox.Redeliver, with a fresh attempt budget)
// until it is pruned with the delivered ones after Config.Retention. The
// defaults (DefaultConfig): 5 s per attempt, 10 attempts from 1 s to at most 1 h,
// about 4.5 h in all.
//
// # The SSRF guard
//
// Subscribers choose the URLs the server then calls, so a Guard keeps deliveries
// away from loopback, private, link-local, cloud metadata and every other
// special-purpose address (the IANA registries; GuardConfig.Allow opens chosen
// networks for local development). CheckURL and CheckTarget validate a target
// when its subscription is created, refusing numeric host forms that only filter
// dodging uses (0177.0.0.1, 2130706433) and cloud metadata host names. That check
// alone is not enough: a name's DNS answer can change after it was checked
// (rebinding), and a name can list a public address next to a private one. So at
// every delivery the guard's DialContext resolves the host itself, checks every
// address of the answer and refuses the delivery if ANY is refused (a name that
// points at an internal address is refused outright, whichever address would have
// connected first), then dials the checked IPs, never the name, so no second
// resolution can swap in another address; the default dialer's Control checks the
// socket address actually being connected once more. IPv4
// addresses embedded in IPv4-mapped, NAT64, 6to4 and Teredo IPv6 addresses are
// checked as IPv4. Guard.Client never follows redirects (a 3xx could point
// anywhere) and ignores proxy settings. Other outbound calls that users can aim
// (tenants' JWKS, sites' purge webhooks and S3 origins) go through the same
// guard's transport.
//
// # What it depends on
//
// The domain (coffer) and the metadata store's Outbox contract (meta), nothing
// more: no face, no service, no store driver, cache or metrics
// (TestWebhookDependsOnOutboxOnly). The layers above wire it in (app starts the
// dispatcher, metrics reads its counters), and every caller that dials a URL a user
// chose can take the guard without pulling in the rest.
package webhook
