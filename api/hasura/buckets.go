package hasura

import (
	"net/http"
	"strconv"
	"time"

	"github.com/coffer/coffer"
)

// Bucket is the JSON shape of a bucket in responses.
type Bucket struct {
	ID                   string    `json:"id"`
	MinUploadFileSize    int64     `json:"minUploadFileSize"`
	MaxUploadFileSize    int64     `json:"maxUploadFileSize"`
	AllowedMimeTypes     []string  `json:"allowedMimeTypes"` // empty: any
	CacheControl         string    `json:"cacheControl"`
	DownloadExpiration   int64     `json:"downloadExpiration"` // seconds, for presigned URLs
	PresignedURLsEnabled bool      `json:"presignedUrlsEnabled"`
	Public               bool      `json:"public"`
	AllowInline          bool      `json:"allowInline"`
	CacheControlShared   bool      `json:"cacheControlShared"` // coffer's: see coffer.Bucket
	CreatedAt            time.Time `json:"createdAt"`
	UpdatedAt            time.Time `json:"updatedAt"`
}

// bucketJSON is the response shape of b.
func bucketJSON(b *coffer.Bucket) Bucket {
	return Bucket{ID: b.ID, MinUploadFileSize: b.MinUploadFileSize, MaxUploadFileSize: b.MaxUploadFileSize,
		AllowedMimeTypes: b.AllowedMimeTypes, CacheControl: b.CacheControl, DownloadExpiration: b.DownloadExpiration,
		PresignedURLsEnabled: b.PresignedURLsEnabled, Public: b.Public, AllowInline: b.AllowInline,
		CacheControlShared: b.CacheControlShared, CreatedAt: b.CreatedAt, UpdatedAt: b.UpdatedAt}
}

// BucketUpdate is the body of PATCH /v1/buckets/{id}: the settings to change; absent
// or null means unchanged. Its name appears in decoding errors: keep it.
type BucketUpdate struct {
	MinUploadFileSize    *int64    `json:"minUploadFileSize,omitempty"`
	MaxUploadFileSize    *int64    `json:"maxUploadFileSize,omitempty"`
	AllowedMimeTypes     *[]string `json:"allowedMimeTypes,omitempty"`
	CacheControl         *string   `json:"cacheControl,omitempty"`
	DownloadExpiration   *int64    `json:"downloadExpiration,omitempty"`
	PresignedURLsEnabled *bool     `json:"presignedUrlsEnabled,omitempty"`
	Public               *bool     `json:"public,omitempty"`
	AllowInline          *bool     `json:"allowInline,omitempty"`
	CacheControlShared   *bool     `json:"cacheControlShared,omitempty"`
}

// toUpdate is the domain update u asks for.
func (u BucketUpdate) toUpdate() coffer.BucketUpdate {
	return coffer.BucketUpdate{MinUploadFileSize: u.MinUploadFileSize, MaxUploadFileSize: u.MaxUploadFileSize,
		AllowedMimeTypes: u.AllowedMimeTypes, CacheControl: u.CacheControl, DownloadExpiration: u.DownloadExpiration,
		PresignedURLsEnabled: u.PresignedURLsEnabled, Public: u.Public, AllowInline: u.AllowInline,
		CacheControlShared: u.CacheControlShared}
}

// bucketCreateJSON is the body of POST /v1/buckets.
type bucketCreateJSON struct {
	ID string `json:"id"`
	BucketUpdate
}

func (h *Handler) listBuckets(w http.ResponseWriter, r *http.Request) {
	bs, err := h.svc.ListBuckets(r.Context(), principal(r))
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"buckets": each(bs, bucketJSON)})
}

func (h *Handler) createBucket(w http.ResponseWriter, r *http.Request) {
	var in bucketCreateJSON
	if err := decodeJSON(r, &in); err != nil {
		writeError(w, r, err)
		return
	}
	b, err := h.svc.CreateBucket(r.Context(), principal(r), in.ID, in.toUpdate())
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, bucketJSON(b))
}

func (h *Handler) getBucket(w http.ResponseWriter, r *http.Request) {
	b, err := h.svc.GetBucket(r.Context(), principal(r), r.PathValue("id"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, bucketJSON(b))
}

func (h *Handler) updateBucket(w http.ResponseWriter, r *http.Request) {
	var u BucketUpdate
	if err := decodeJSON(r, &u); err != nil {
		writeError(w, r, err)
		return
	}
	b, err := h.svc.UpdateBucket(r.Context(), principal(r), r.PathValue("id"), u.toUpdate())
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, bucketJSON(b))
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
