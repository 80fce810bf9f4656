package service_test

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/service"
)

// Webhook administration is the admin's, and answers ENOTIMPLEMENTED until enabled.
func TestWebhooksOff(t *testing.T) {
	ctx := context.Background()
	svc, _, _ := newService(t, "")
	sub := coffer.Subscription{URL: "http://127.0.0.1:9/hook"}
	wantCode(t, "as a user", second(svc.CreateSubscription(ctx, user("u1"), sub)), coffer.EFORBIDDEN)
	wantCode(t, "not enabled", second(svc.CreateSubscription(ctx, coffer.AdminPrincipal(), sub)), coffer.ENOTIMPLEMENTED)
	wantCode(t, "list, not enabled", second(svc.ListSubscriptions(ctx, coffer.AdminPrincipal())), coffer.ENOTIMPLEMENTED)
}

// A subscription is validated, then its URL checked against the network policy; it
// gets an id and, unless given, a random secret shown only at creation. A change to
// a file then queues a delivery to it, which can be listed, sent again and dropped
// with its subscription.
func TestWebhookSubscriptions(t *testing.T) {
	ctx := context.Background()
	svc, m, _ := newService(t, "")
	admin := coffer.AdminPrincipal()
	var checked []string
	svc.SetWebhooks(service.Webhooks{Outbox: m, CheckURL: func(_ context.Context, raw string) error {
		checked = append(checked, raw)
		if strings.Contains(raw, "10.0.0.1") {
			return coffer.Errorf(coffer.EFORBIDDEN, "private address")
		}
		return nil
	}})
	for name, c := range map[string]struct {
		sub  coffer.Subscription
		want string
	}{
		"unknown event":  {coffer.Subscription{URL: "http://127.0.0.1:9/", Events: []coffer.EventType{"file.eaten"}}, coffer.EINVALID},
		"short secret":   {coffer.Subscription{URL: "http://127.0.0.1:9/", Secret: "short"}, coffer.EINVALID},
		"not http":       {coffer.Subscription{URL: "ftp://127.0.0.1/"}, coffer.EINVALID},
		"bad bucket":     {coffer.Subscription{URL: "http://127.0.0.1:9/", BucketID: "No Such!"}, coffer.EINVALID},
		"policy refuses": {coffer.Subscription{URL: "http://10.0.0.1/"}, coffer.EFORBIDDEN},
	} {
		wantCode(t, name, second(svc.CreateSubscription(ctx, admin, c.sub)), c.want)
	}
	if !slices.Equal(checked, []string{"http://10.0.0.1/"}) {
		t.Fatalf("URLs checked against the policy: %q, want only the valid subscription's", checked)
	}
	sub, err := svc.CreateSubscription(ctx, admin, coffer.Subscription{URL: "http://127.0.0.1:9/hook", Events: []coffer.EventType{coffer.FileCreated}})
	must(t, err)
	if !strings.HasPrefix(sub.Secret, "whsec_") || len(sub.Secret) != len("whsec_")+43 || sub.ID == "" {
		t.Fatalf("created subscription %q with secret %q", sub.ID, sub.Secret)
	}
	listed, err := svc.ListSubscriptions(ctx, admin)
	must(t, err)
	if len(listed) != 1 || listed[0].ID != sub.ID || listed[0].Secret != "" {
		t.Fatalf("listed %d subscriptions (secret shown: %v)", len(listed), len(listed) > 0 && listed[0].Secret != "")
	}

	_, err = upload(svc, admin, "default", text("abc"))
	must(t, err)
	ds, err := svc.ListDeliveries(ctx, admin, sub.ID, coffer.DeliveryPending, 10)
	must(t, err)
	if len(ds) != 1 || ds[0].EventType != coffer.FileCreated {
		t.Fatalf("%d pending deliveries after an upload", len(ds))
	}
	must(t, svc.Redeliver(ctx, admin, sub.ID, strconv.FormatInt(ds[0].ID, 10)))
	wantCode(t, "redeliver a malformed id", svc.Redeliver(ctx, admin, sub.ID, "1x"), coffer.ENOTFOUND)
	wantCode(t, "deliveries in state sent", second(svc.ListDeliveries(ctx, admin, sub.ID, "sent", 10)), coffer.EINVALID)
	wantCode(t, "deliveries by 1001", second(svc.ListDeliveries(ctx, admin, sub.ID, "", 1001)), coffer.EINVALID)
	must(t, svc.DeleteSubscription(ctx, admin, sub.ID))
	wantCode(t, "the deleted subscription", second(svc.GetSubscription(ctx, admin, sub.ID)), coffer.ENOTFOUND)
	wantCode(t, "its deliveries", second(svc.ListDeliveries(ctx, admin, sub.ID, "", 10)), coffer.ENOTFOUND)
}
