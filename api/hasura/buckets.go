package hasura

import (
	"net/http"
	"strconv"

	"github.com/coffer/coffer"
)

type bucketCreateJSON struct {
	ID string `json:"id"`
	coffer.BucketUpdate
}

func (h *Handler) listBuckets(w http.ResponseWriter, r *http.Request) {
	bs, err := h.svc.ListBuckets(r.Context(), principal(r))
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"buckets": bs})
}

func (h *Handler) createBucket(w http.ResponseWriter, r *http.Request) {
	var in bucketCreateJSON
	if err := decodeJSON(r, &in); err != nil {
		writeError(w, r, err)
		return
	}
	b, err := h.svc.CreateBucket(r.Context(), principal(r), in.ID, in.BucketUpdate)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, b)
}

func (h *Handler) getBucket(w http.ResponseWriter, r *http.Request) {
	b, err := h.svc.GetBucket(r.Context(), principal(r), r.PathValue("id"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, b)
}

func (h *Handler) updateBucket(w http.ResponseWriter, r *http.Request) {
	var u coffer.BucketUpdate
	if err := decodeJSON(r, &u); err != nil {
		writeError(w, r, err)
		return
	}
	b, err := h.svc.UpdateBucket(r.Context(), principal(r), r.PathValue("id"), u)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, b)
}

func (h *Handler) deleteBucket(w http.ResponseWriter, r *http.Request) {
	if err := h.svc.DeleteBucket(r.Context(), principal(r), r.PathValue("id")); err != nil {
		writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// listBucketFiles serves GET /v1/buckets/{id}/files?prefix=&limit=&cursor=.
func (h *Handler) listBucketFiles(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	opt := coffer.ListOptions{BucketID: r.PathValue("id"), Prefix: q.Get("prefix"), Cursor: q.Get("cursor"), Limit: 100}
	if err := coffer.ValidateBucketID(opt.BucketID); err != nil {
		writeError(w, r, coffer.Errorf(coffer.ENOTFOUND, "bucket not found"))
		return
	}
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 1000 {
			writeError(w, r, coffer.Errorf(coffer.EINVALID, "limit must be an integer between 1 and 1000"))
			return
		}
		opt.Limit = n
	}
	page, err := h.svc.ListFiles(r.Context(), principal(r), opt)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"files": filesJSON(page.Files), "nextCursor": page.Next})
}
