package hasura

import (
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/auth"
	"github.com/coffer/coffer/imaging"
	"github.com/coffer/coffer/internal/httpserve"
	"github.com/coffer/coffer/service"
)

// errPresignDisabled is hasura-storage's answer for a bucket without presigned URLs.
func errPresignDisabled() error { return service.ErrPresignDisabled() }

// presignedPath is the path a presigned URL of file id signs: always the canonical
// ".../contents" form on this server, whatever prefix a proxy adds in front.
func presignedPath(id string) string { return "/v1/files/" + id + "/presignedurl/contents" }

// presignURL serves GET /v1/files/{id}/presignedurl for callers who may read the file.
// The URL is signed as S3 presigns a GetObject (X-Amz-* parameters, SigV4 with
// coffer's presign key), the shape of hasura-storage's URLs. Transformation
// parameters given here are appended unsigned: as with hasura-storage, the URL's
// holder may change them (they can fetch the original anyway).
func (h *Handler) presignURL(w http.ResponseWriter, r *http.Request) {
	f, ttl, err := h.svc.Presign(r.Context(), principal(r), r.PathValue("id"), 0)
	if err != nil {
		writeError(w, r, err)
		return
	}
	extra, err := presignTransform(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	u := h.PresignedURL(f.ID, ttl)
	if len(extra) > 0 {
		u += "&" + extra.Encode()
	}
	writeJSON(w, http.StatusOK, map[string]any{"url": u, "expiration": int64(ttl / time.Second)})
}

// PresignedURL returns the presigned URL of file id, valid for ttl: the download
// URL of this face on the public URL, which other faces hand out too (the RPC
// face's PresignFile, wired by app). The caller has checked that it may be made
// (service.Presign).
func (h *Handler) PresignedURL(id string, ttl time.Duration) string {
	return h.cfg.PublicURL + presignedPath(id) + "?" + h.signer.PresignV4(h.publicHost, presignedPath(id), ttl)
}

// verifyPresigned checks a presigned URL of either form (S3's X-Amz-*, or coffer's
// earlier X-Coffer-*, accepted until they expire) and returns when it expires.
func (h *Handler) verifyPresigned(id string, q url.Values) (time.Time, error) {
	if auth.IsV4(q) {
		return h.signer.VerifyV4(h.publicHost, presignedPath(id), q)
	}
	if err := h.signer.Verify(http.MethodGet, id, q); err != nil {
		return time.Time{}, err
	}
	exp, _ := strconv.ParseInt(q.Get(auth.ParamExpires), 10, 64) // Verify parsed it
	return time.Unix(exp, 0), nil
}

// presignedContents serves a file to whoever holds a valid presigned URL, with
// Cache-Control max-age set to the seconds the signature has left (hasura-storage's
// answer: a cache must not serve the file after the URL has expired), and private
// (sharedAnswer).
func (h *Handler) presignedContents(w http.ResponseWriter, r *http.Request) {
	id, err := coffer.ParseFileID(r.PathValue("id"))
	if err != nil {
		writeError(w, r, coffer.Errorf(coffer.EFORBIDDEN, "presigned URL is not valid"))
		return
	}
	exp, err := h.verifyPresigned(id, r.URL.Query())
	if err != nil {
		writeError(w, r, err)
		return
	}
	if o, err := transformOptions(r); err != nil || !o.IsZero() {
		h.presignedVariant(w, r, id, o, exp, err)
		return
	}
	f, b, rd, err := h.svc.OpenFile(r.Context(), coffer.AdminPrincipal(), id)
	if err != nil {
		writeError(w, r, err)
		return
	}
	defer rd.Close()
	if !b.PresignedURLsEnabled {
		writeError(w, r, errPresignDisabled())
		return
	}
	h.serveContent(w, r, f, untilExpiry(b, exp), sharedAnswer(nil, b), httpserve.SeekerOf(rd))
}

// untilExpiry returns b with its Cache-Control replaced by the seconds left until exp.
func untilExpiry(b *coffer.Bucket, exp time.Time) *coffer.Bucket {
	c := *b
	c.CacheControl = "max-age=" + strconv.FormatInt(max(int64(time.Until(exp)/time.Second), 0), 10)
	return &c
}

// presignedVariant serves the transformation of a presigned URL.
func (h *Handler) presignedVariant(w http.ResponseWriter, r *http.Request, id string, o imaging.Options, exp time.Time, err error) {
	if err != nil {
		writeError(w, r, err)
		return
	}
	_, b, err := h.svc.GetFile(r.Context(), coffer.AdminPrincipal(), id)
	if err == nil && !b.PresignedURLsEnabled {
		err = errPresignDisabled()
	}
	if err != nil {
		writeError(w, r, err)
		return
	}
	h.serveVariantCached(w, r, coffer.AdminPrincipal(), id, o, exp)
}
