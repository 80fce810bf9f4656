package httpapi

import (
	"net/http"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/imaging"
)

// presignURL serves GET /v1/files/{id}/presignedurl for callers who may read the file.
func (h *Handler) presignURL(w http.ResponseWriter, r *http.Request) {
	f, b, err := h.svc.GetFile(r.Context(), principal(r), r.PathValue("id"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	if !b.PresignedURLsEnabled {
		writeError(w, r, coffer.Errorf(coffer.EFORBIDDEN, "presigned URLs are not enabled on bucket %q", b.ID))
		return
	}
	extra, err := signedTransform(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	ttl := time.Duration(min(b.DownloadExpiration, coffer.MaxDownloadExpiration)) * time.Second
	q := h.signer.Sign(http.MethodGet, f.ID, ttl, extra)
	writeJSON(w, http.StatusOK, map[string]any{
		"url":        h.cfg.PublicURL + "/v1/files/" + f.ID + "/presignedurl/contents?" + q,
		"expiration": int64(ttl / time.Second),
	})
}

// presignedContents serves a file to whoever holds a valid presigned URL.
func (h *Handler) presignedContents(w http.ResponseWriter, r *http.Request) {
	id, err := coffer.ParseFileID(r.PathValue("id"))
	if err != nil {
		writeError(w, r, coffer.Errorf(coffer.EFORBIDDEN, "presigned URL is not valid"))
		return
	}
	if err := h.signer.Verify(http.MethodGet, id, r.URL.Query()); err != nil {
		writeError(w, r, err)
		return
	}
	if o, err := transformOptions(r); err != nil || !o.IsZero() {
		h.presignedVariant(w, r, id, o, err)
		return
	}
	f, b, rd, err := h.svc.OpenFile(r.Context(), coffer.AdminPrincipal(), id)
	if err != nil {
		writeError(w, r, err)
		return
	}
	defer rd.Close()
	if !b.PresignedURLsEnabled {
		writeError(w, r, coffer.Errorf(coffer.EFORBIDDEN, "presigned URLs are not enabled on bucket %q", b.ID))
		return
	}
	h.serveContent(w, r, f, b, seekerOf(rd))
}

// presignedVariant serves the signed transformation of a presigned URL.
func (h *Handler) presignedVariant(w http.ResponseWriter, r *http.Request, id string, o imaging.Options, err error) {
	if err != nil {
		writeError(w, r, err)
		return
	}
	_, b, err := h.svc.GetFile(r.Context(), coffer.AdminPrincipal(), id)
	if err == nil && !b.PresignedURLsEnabled {
		err = coffer.Errorf(coffer.EFORBIDDEN, "presigned URLs are not enabled on bucket %q", b.ID)
	}
	if err != nil {
		writeError(w, r, err)
		return
	}
	h.serveVariant(w, r, coffer.AdminPrincipal(), id, o)
}
