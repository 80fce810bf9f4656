package rpcapi

import (
	"context"
	"strconv"

	"connectrpc.com/connect"

	adminv1 "github.com/coffer/coffer/proto/gen/coffer/admin/v1"
)

// CreateWebhook serves WebhookService.CreateWebhook.
func (s *server) CreateWebhook(ctx context.Context, req *connect.Request[adminv1.CreateWebhookRequest]) (*connect.Response[adminv1.CreateWebhookResponse], error) {
	sub, err := s.h.svc.CreateSubscription(ctx, principal(ctx), subscription(req.Msg))
	if err != nil {
		return nil, s.h.toConnect(ctx, err)
	}
	return connect.NewResponse(&adminv1.CreateWebhookResponse{Webhook: webhookPB(sub)}), nil
}

// ListWebhooks serves WebhookService.ListWebhooks.
func (s *server) ListWebhooks(ctx context.Context, _ *connect.Request[adminv1.ListWebhooksRequest]) (*connect.Response[adminv1.ListWebhooksResponse], error) {
	subs, err := s.h.svc.ListSubscriptions(ctx, principal(ctx))
	if err != nil {
		return nil, s.h.toConnect(ctx, err)
	}
	out := &adminv1.ListWebhooksResponse{Webhooks: make([]*adminv1.Webhook, len(subs))}
	for i, sub := range subs {
		out.Webhooks[i] = webhookPB(sub)
	}
	return connect.NewResponse(out), nil
}

// GetWebhook serves WebhookService.GetWebhook.
func (s *server) GetWebhook(ctx context.Context, req *connect.Request[adminv1.GetWebhookRequest]) (*connect.Response[adminv1.GetWebhookResponse], error) {
	sub, err := s.h.svc.GetSubscription(ctx, principal(ctx), req.Msg.GetId())
	if err != nil {
		return nil, s.h.toConnect(ctx, err)
	}
	return connect.NewResponse(&adminv1.GetWebhookResponse{Webhook: webhookPB(sub)}), nil
}

// DeleteWebhook serves WebhookService.DeleteWebhook.
func (s *server) DeleteWebhook(ctx context.Context, req *connect.Request[adminv1.DeleteWebhookRequest]) (*connect.Response[adminv1.DeleteWebhookResponse], error) {
	if err := s.h.svc.DeleteSubscription(ctx, principal(ctx), req.Msg.GetId()); err != nil {
		return nil, s.h.toConnect(ctx, err)
	}
	return connect.NewResponse(&adminv1.DeleteWebhookResponse{}), nil
}

// ListDeliveries serves WebhookService.ListDeliveries.
func (s *server) ListDeliveries(ctx context.Context, req *connect.Request[adminv1.ListDeliveriesRequest]) (*connect.Response[adminv1.ListDeliveriesResponse], error) {
	state, err := deliveryState(req.Msg.GetState())
	if err != nil {
		return nil, s.h.toConnect(ctx, err)
	}
	ds, err := s.h.svc.ListDeliveries(ctx, principal(ctx), req.Msg.GetWebhookId(), state, limitArg(req.Msg.GetLimit()))
	if err != nil {
		return nil, s.h.toConnect(ctx, err)
	}
	out := &adminv1.ListDeliveriesResponse{Deliveries: make([]*adminv1.Delivery, len(ds))}
	for i, d := range ds {
		out.Deliveries[i] = deliveryPB(d)
	}
	return connect.NewResponse(out), nil
}

// RedeliverDelivery serves WebhookService.RedeliverDelivery.
func (s *server) RedeliverDelivery(ctx context.Context, req *connect.Request[adminv1.RedeliverDeliveryRequest]) (*connect.Response[adminv1.RedeliverDeliveryResponse], error) {
	id := strconv.FormatInt(req.Msg.GetDeliveryId(), 10)
	if err := s.h.svc.Redeliver(ctx, principal(ctx), req.Msg.GetWebhookId(), id); err != nil {
		return nil, s.h.toConnect(ctx, err)
	}
	return connect.NewResponse(&adminv1.RedeliverDeliveryResponse{}), nil
}
