package hasura

import (
	"net/http"
	"strconv"

	"github.com/coffer/coffer"
)

// subscriptionJSON is the body of POST /v1/webhooks.
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
	writeJSON(w, http.StatusCreated, sub)
}

func (h *Handler) listWebhooks(w http.ResponseWriter, r *http.Request) {
	subs, err := h.svc.ListSubscriptions(r.Context(), principal(r))
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"webhooks": subs})
}

func (h *Handler) getWebhook(w http.ResponseWriter, r *http.Request) {
	sub, err := h.svc.GetSubscription(r.Context(), principal(r), r.PathValue("id"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, sub)
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
	writeJSON(w, http.StatusOK, map[string]any{"deliveries": ds})
}

func (h *Handler) redeliver(w http.ResponseWriter, r *http.Request) {
	if err := h.svc.Redeliver(r.Context(), principal(r), r.PathValue("id"), r.PathValue("delivery")); err != nil {
		writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusAccepted)
}
