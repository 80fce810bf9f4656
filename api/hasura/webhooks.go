package hasura

import (
	"net/http"
	"strconv"
	"time"

	"github.com/coffer/coffer"
)

// Subscription is the JSON shape of a webhook subscription in responses.
type Subscription struct {
	ID        string             `json:"id"`
	BucketID  string             `json:"bucketId"`
	Events    []coffer.EventType `json:"events"`
	URL       string             `json:"url"`
	Secret    string             `json:"secret,omitempty"` // shown only when created
	CreatedAt time.Time          `json:"createdAt"`
}

// webhookJSON is the response shape of s (the secret only if s has it: when created).
func webhookJSON(s *coffer.Subscription) Subscription {
	return Subscription{ID: s.ID, BucketID: s.BucketID, Events: s.Events, URL: s.URL, Secret: s.Secret, CreatedAt: s.CreatedAt}
}

// Delivery is the JSON shape of one event's delivery to a subscription.
type Delivery struct {
	ID             int64            `json:"id"`
	SubscriptionID string           `json:"subscriptionId"`
	EventID        string           `json:"eventId"`
	EventType      coffer.EventType `json:"eventType"`
	State          string           `json:"state"`
	Attempts       int              `json:"attempts"`
	NextAttemptAt  time.Time        `json:"nextAttemptAt"`
	LastStatus     int              `json:"lastStatus"` // HTTP status of the last attempt, 0 if none
	LastError      string           `json:"lastError"`
	CreatedAt      time.Time        `json:"createdAt"`
	UpdatedAt      time.Time        `json:"updatedAt"`
}

// deliveryJSON is the response shape of d.
func deliveryJSON(d *coffer.Delivery) Delivery {
	return Delivery{ID: d.ID, SubscriptionID: d.SubscriptionID, EventID: d.EventID, EventType: d.EventType,
		State: d.State, Attempts: d.Attempts, NextAttemptAt: d.NextAttemptAt, LastStatus: d.LastStatus,
		LastError: d.LastError, CreatedAt: d.CreatedAt, UpdatedAt: d.UpdatedAt}
}

// subscriptionJSON is the body of POST /v1/webhooks (its name appears in decoding
// errors).
type subscriptionJSON struct {
	URL      string             `json:"url"`
	BucketID string             `json:"bucketId"`
	Events   []coffer.EventType `json:"events"`
	Secret   string             `json:"secret"`
}

func (h *Handler) createWebhook(w http.ResponseWriter, r *http.Request) {
	var in subscriptionJSON
	if err := decodeJSON(r, &in); err != nil {
		writeError(w, r, err)
		return
	}
	sub, err := h.svc.CreateSubscription(r.Context(), principal(r), coffer.Subscription{
		URL: in.URL, BucketID: in.BucketID, Events: in.Events, Secret: in.Secret})
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, webhookJSON(sub))
}

func (h *Handler) listWebhooks(w http.ResponseWriter, r *http.Request) {
	subs, err := h.svc.ListSubscriptions(r.Context(), principal(r))
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"webhooks": each(subs, webhookJSON)})
}

func (h *Handler) getWebhook(w http.ResponseWriter, r *http.Request) {
	sub, err := h.svc.GetSubscription(r.Context(), principal(r), r.PathValue("id"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, webhookJSON(sub))
}

func (h *Handler) deleteWebhook(w http.ResponseWriter, r *http.Request) {
	if err := h.svc.DeleteSubscription(r.Context(), principal(r), r.PathValue("id")); err != nil {
		writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// listDeliveries serves GET /v1/webhooks/{id}/deliveries?state=&limit=.
func (h *Handler) listDeliveries(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	limit := 100
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			writeError(w, r, coffer.Errorf(coffer.EINVALID, "limit must be between 1 and 1000"))
			return
		}
		limit = n
	}
	ds, err := h.svc.ListDeliveries(r.Context(), principal(r), r.PathValue("id"), q.Get("state"), limit)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"deliveries": each(ds, deliveryJSON)})
}

func (h *Handler) redeliver(w http.ResponseWriter, r *http.Request) {
	if err := h.svc.Redeliver(r.Context(), principal(r), r.PathValue("id"), r.PathValue("delivery")); err != nil {
		writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusAccepted)
}
