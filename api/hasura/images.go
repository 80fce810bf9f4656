package hasura

import (
	"errors"
	"math"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/imaging"
)

// transformOptions returns the image transformation a download URL asks for (zero
// options: none). Bad parameters are EINVALID naming the parameter.
func transformOptions(r *http.Request) (imaging.Options, error) {
	if r.URL.RawQuery == "" {
		return imaging.Options{}, nil
	}
	return imaging.Parse(r.URL.Query())
}

// serveVariant answers a download with transformation parameters: the variant, with
// an ETag of its own, conditional and range requests as for files.
func (h *Handler) serveVariant(w http.ResponseWriter, r *http.Request, p *coffer.Principal, id string, o imaging.Options) {
	h.serveVariantCached(w, r, p, id, o, time.Time{})
}

// serveVariantCached is serveVariant for a presigned URL expiring at presigned (zero:
// none), whose answer has the seconds left as max-age (untilExpiry) and is private
// (sharedAnswer).
func (h *Handler) serveVariantCached(w http.ResponseWriter, r *http.Request, p *coffer.Principal, id string, o imaging.Options, presigned time.Time) {
	ctx := imaging.WithUser(r.Context(), transformUser(p, r))
	f, b, v, err := h.svc.OpenVariant(ctx, p, id, o, r.Header.Get("Accept"))
	if err != nil {
		var later *imaging.RetryLater
		switch {
		case errors.As(err, &later):
			w.Header().Set("Retry-After", strconv.FormatInt(int64(max(1, math.Ceil(later.After.Seconds()))), 10))
		case errors.Is(err, imaging.ErrBusy), errors.Is(err, imaging.ErrUserBusy):
			w.Header().Set("Retry-After", "1")
		}
		writeError(w, r, err)
		return
	}
	vf := *f
	vf.MimeType, vf.ETag, vf.Size = v.MIME, v.ETag, int64(len(v.Data))
	if v.VaryAccept {
		w.Header().Add("Vary", "Accept")
	}
	shared := sharedAnswer(p, b)
	if !presigned.IsZero() {
		shared, b = sharedAnswer(nil, b), untilExpiry(b, presigned)
	}
	h.serveContent(w, r, &vf, b, shared, v.Reader(f.ID))
}

// transformUser is the key under which the image pool caps one user's
// transformations (imaging.WithUser): "admin" for the admin secret (and admin
// JWTs), "user:" and the JWT's user id, else "ip:" and the client's address
// (anonymous, public and presigned requests; behind a proxy all its clients share
// its address). A tenant prefix goes in front when tenants come.
func transformUser(p *coffer.Principal, r *http.Request) string {
	switch {
	case p != nil && p.Admin:
		return "admin"
	case p != nil && p.UserID != "":
		return "user:" + p.UserID
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	return "ip:" + host
}

// presignTransform returns the canonical transformation of a presign request, as the
// parameters to append (unsigned) to the URL, nil if there is none.
func presignTransform(r *http.Request) (url.Values, error) {
	o, err := transformOptions(r)
	if err != nil || o.IsZero() {
		return nil, err
	}
	return url.ParseQuery(o.Canonical())
}
