package service

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"strconv"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/meta"
)

// Webhooks is what webhook administration needs: the outbox of the metadata database
// and the check of a target URL against the network policy (the webhook guard's
// CheckTarget, which also resolves the host).
type Webhooks struct {
	Outbox   meta.Outbox
	CheckURL func(ctx context.Context, raw string) error
}

// SetWebhooks enables webhook administration. Without it, the routes answer 501.
func (s *Service) SetWebhooks(w Webhooks) { s.webhooks = &w }

func (s *Service) outbox(p *coffer.Principal) (meta.Outbox, error) {
	if err := requireAdmin(p); err != nil {
		return nil, err
	}
	if s.webhooks == nil {
		return nil, coffer.Errorf(coffer.ENOTIMPLEMENTED, "webhooks are not enabled on this server")
	}
	return s.webhooks.Outbox, nil
}

// CreateSubscription stores a subscription (admin). The URL is checked against the
// network policy now, its host resolved (a name that does not resolve is refused),
// and again at every delivery. An empty
// Secret is replaced by a random one; the result is the only place it is shown.
func (s *Service) CreateSubscription(ctx context.Context, p *coffer.Principal, sub coffer.Subscription) (*coffer.Subscription, error) {
	o, err := s.outbox(p)
	if err != nil {
		return nil, err
	}
	if sub.Secret == "" {
		sub.Secret = newSecret()
	}
	if sub.Events == nil {
		sub.Events = []coffer.EventType{}
	}
	if err := sub.Validate(); err != nil {
		return nil, err
	}
	if err := s.webhooks.CheckURL(ctx, sub.URL); err != nil {
		return nil, err
	}
	sub.ID = coffer.NewFileID()
	if err := o.CreateSubscription(ctx, &sub); err != nil {
		return nil, err
	}
	return &sub, nil
}

// newSecret returns a signing secret: "whsec_" and 32 random bytes, base64url.
func newSecret() string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return "whsec_" + base64.RawURLEncoding.EncodeToString(b[:])
}

// ListSubscriptions lists every subscription, without secrets (admin).
func (s *Service) ListSubscriptions(ctx context.Context, p *coffer.Principal) ([]*coffer.Subscription, error) {
	o, err := s.outbox(p)
	if err != nil {
		return nil, err
	}
	return o.ListSubscriptions(ctx)
}

// GetSubscription returns one subscription, without its secret (admin).
func (s *Service) GetSubscription(ctx context.Context, p *coffer.Principal, id string) (*coffer.Subscription, error) {
	o, err := s.outbox(p)
	if err != nil {
		return nil, err
	}
	return o.GetSubscription(ctx, id)
}

// DeleteSubscription removes a subscription and its delivery log (admin).
func (s *Service) DeleteSubscription(ctx context.Context, p *coffer.Principal, id string) error {
	o, err := s.outbox(p)
	if err != nil {
		return err
	}
	return o.DeleteSubscription(ctx, id)
}

// ListDeliveries returns a subscription's delivery log, newest first (admin). state
// is "", pending, delivered or dead; limit 1..1000.
func (s *Service) ListDeliveries(ctx context.Context, p *coffer.Principal, subID, state string, limit int) ([]*coffer.Delivery, error) {
	o, err := s.outbox(p)
	if err != nil {
		return nil, err
	}
	switch state {
	case "", coffer.DeliveryPending, coffer.DeliveryDelivered, coffer.DeliveryDead:
	default:
		return nil, coffer.Errorf(coffer.EINVALID, "state must be pending, delivered or dead")
	}
	if limit < 0 || limit > 1000 {
		return nil, coffer.Errorf(coffer.EINVALID, "limit must be between 1 and 1000")
	}
	if _, err := o.GetSubscription(ctx, subID); err != nil {
		return nil, err
	}
	return o.ListDeliveries(ctx, meta.DeliveryQuery{SubscriptionID: subID, State: state, Limit: limit})
}

// Redeliver sends a delivery again, with a fresh attempt budget (admin).
func (s *Service) Redeliver(ctx context.Context, p *coffer.Principal, subID, deliveryID string) error {
	o, err := s.outbox(p)
	if err != nil {
		return err
	}
	id, err := strconv.ParseInt(deliveryID, 10, 64)
	if err != nil || id <= 0 {
		return coffer.Errorf(coffer.ENOTFOUND, "delivery %q not found", deliveryID)
	}
	return o.Redeliver(ctx, subID, id, s.now().UTC())
}
