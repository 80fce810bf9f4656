package hasura

import (
	"net/http"
	"strconv"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/metrics"
	"github.com/coffer/coffer/service"
)

// SweepReport is the JSON shape of what a sweep removed.
type SweepReport struct {
	AbandonedUploads int      `json:"abandonedUploads"`
	TempFiles        int      `json:"tempFiles"`
	OrphanBlobs      []string `json:"orphanBlobs"`
}

// sweepJSON is the response shape of a sweep report.
func sweepJSON(r service.SweepReport) SweepReport {
	return SweepReport{AbandonedUploads: r.AbandonedUploads, TempFiles: r.TempFiles, OrphanBlobs: r.OrphanBlobs}
}

// Rejection is the JSON shape of an upload the virus scanner refused.
type Rejection struct {
	ID        string    `json:"id"`
	Time      time.Time `json:"time"`
	BucketID  string    `json:"bucketId"`
	Name      string    `json:"name"`
	FileID    string    `json:"fileId,omitempty"`
	UserID    string    `json:"uploadedByUserId,omitempty"`
	Role      string    `json:"role"`
	Signature string    `json:"signature"`
	Size      int64     `json:"size"` // bytes read before the verdict
}

// rejectionJSON is the response shape of r.
func rejectionJSON(r *coffer.Rejection) Rejection {
	return Rejection{ID: r.ID, Time: r.Time, BucketID: r.BucketID, Name: r.Name, FileID: r.FileID,
		UserID: r.UserID, Role: r.Role, Signature: r.Signature, Size: r.Size}
}

func (h *Handler) listOrphans(w http.ResponseWriter, r *http.Request) {
	keys, err := h.svc.ListOrphans(r.Context(), principal(r))
	respondOps(w, r, "files", keys, err)
}

func (h *Handler) deleteOrphans(w http.ResponseWriter, r *http.Request) {
	keys, err := h.svc.DeleteOrphans(r.Context(), principal(r))
	respondOps(w, r, "files", keys, err)
}

func (h *Handler) listBrokenMetadata(w http.ResponseWriter, r *http.Request) {
	fs, err := h.svc.ListBrokenMetadata(r.Context(), principal(r))
	respondOps(w, r, "metadata", filesJSON(fs), err)
}

func (h *Handler) deleteBrokenMetadata(w http.ResponseWriter, r *http.Request) {
	fs, err := h.svc.DeleteBrokenMetadata(r.Context(), principal(r))
	respondOps(w, r, "metadata", filesJSON(fs), err)
}

func (h *Handler) listNotUploaded(w http.ResponseWriter, r *http.Request) {
	fs, err := h.svc.ListNotUploaded(r.Context(), principal(r))
	respondOps(w, r, "metadata", filesJSON(fs), err)
}

// sweep runs the sweeper now, treating uploads older than ?olderThan= (a Go duration,
// default service.DefaultSweepAge, 24h) as abandoned.
func (h *Handler) sweep(w http.ResponseWriter, r *http.Request) {
	age := service.DefaultSweepAge
	if s := r.URL.Query().Get("olderThan"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			writeError(w, r, coffer.Errorf(coffer.EINVALID, "olderThan must be a duration like 1h"))
			return
		}
		age = d
	}
	rep, err := h.svc.SweepOlderThan(r.Context(), principal(r), age)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, sweepJSON(rep))
}

// respondOps answers an ops call in hasura-storage's shape: orphans (blob keys) under
// "files", file rows under "metadata".
func respondOps[T any](w http.ResponseWriter, r *http.Request, key string, items []T, err error) {
	if err != nil {
		writeError(w, r, err)
		return
	}
	if items == nil {
		items = []T{}
	}
	writeJSON(w, http.StatusOK, map[string]any{key: items})
}

// listVirusRejections lists the uploads the virus scanner refused, newest first;
// ?limit= 1..1000 (default 100).
func (h *Handler) listVirusRejections(w http.ResponseWriter, r *http.Request) {
	limit := 0
	if s := r.URL.Query().Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 1000 {
			writeError(w, r, coffer.Errorf(coffer.EINVALID, "limit must be an integer from 1 to 1000"))
			return
		}
		limit = n
	}
	recs, err := h.svc.ListRejections(r.Context(), principal(r), limit)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"rejections": each(recs, rejectionJSON)})
}

// serveMetrics returns the handler of GET /metrics on the API port, which is closed
// by default: it serves mh to the --metrics-token's bearer and to admins (the admin
// secret, or an admin JWT); requests without credentials get 401 and other
// principals 403, with no metric in either body. A --metrics-listen listener is
// served elsewhere, open unless it has a token.
func (h *Handler) serveMetrics(mh http.Handler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if metrics.TokenMatches(h.cfg.MetricsToken, r) {
			mh.ServeHTTP(w, r)
			return
		}
		switch p := principal(r); {
		case p == nil || p.Anonymous:
			w.Header().Set("WWW-Authenticate", `Bearer realm="metrics"`)
			writeError(w, r, coffer.Errorf(coffer.EUNAUTHORIZED, "/metrics needs the admin secret or Authorization: Bearer <the --metrics-token>"))
		case !p.Admin:
			writeError(w, r, coffer.Errorf(coffer.EFORBIDDEN, "/metrics is for admins and the --metrics-token"))
		default:
			mh.ServeHTTP(w, r)
		}
	}
}
