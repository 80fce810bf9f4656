package hasura

import (
	"io"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/auth"
	"github.com/coffer/coffer/internal/httpserve"
)

// ServeFast answers, on the HTTP/1.1 fast path (httpserve.FastServer), the requests
// that are most of a storage service's traffic: GET and HEAD /v1/files/{id} with no
// query (no image transformation), no Range and no conditional header but
// If-None-Match (a cache revalidating: 304 when the ETag matches), that the caller
// may read. The answer is getFile's plan (filePlan) written by the fast writer
// (TestFastPathAnswersAsNetHTTP compares the two paths), without net/http's request
// and header maps. Everything else, errors included, it declines before writing a
// byte: net/http then serves the request through the Frame as usual (the lookups
// done here were reads, and hit the caches the second time).
func (h *Handler) ServeFast(req *httpserve.FastRequest, w *httpserve.FastWriter) bool {
	id, ok := fastFileID(req)
	if !ok || req.Has(slowHeaders[:]...) {
		return false
	}
	st := h.frame.BeginFast(req)
	authStart := time.Now()
	p, err := h.authn.PrincipalOf(st, req.Header(auth.CredentialHeaders...))
	st.Timer.Add("auth", time.Since(authStart), "")
	if err != nil {
		return false
	}
	if req.Method == "HEAD" {
		f, b, err := h.svc.GetFile(st, p, id)
		if err != nil {
			return false
		}
		return h.fastAnswer(st, fastRouteHead, req, w, f, b, sharedAnswer(p, b), nil)
	}
	f, b, rd, err := h.svc.OpenFile(st, p, id)
	if err != nil {
		return false
	}
	defer rd.Close()
	return h.fastAnswer(st, fastRouteGet, req, w, f, b, sharedAnswer(p, b), httpserve.SeekerOf(rd))
}

// fastAnswer sends f's answer (filePlan) with body (nil for HEAD), or its 304 Not
// Modified (notModified) when the request's If-None-Match matches f's ETag
// (httpserve.NoneMatch: http.ServeContent's test); false, having written nothing,
// when the fast writer would not write it as net/http (httpserve.Plan.Fast).
// shared: sharedAnswer.
func (h *Handler) fastAnswer(st *httpserve.FastState, route string, req *httpserve.FastRequest, w *httpserve.FastWriter,
	f *coffer.File, b *coffer.Bucket, shared bool, body io.ReadSeeker) bool {
	var pl httpserve.Plan
	filePlan(&pl, f, b, shared, body)
	if inm, ok := req.Get("If-None-Match"); ok && !httpserve.NoneMatch(inm, f.ETag) {
		notModified(&pl, f.ETag)
	}
	if !pl.Fast() {
		return false
	}
	h.frame.SendPlan(st, route, req, w, &pl)
	return true
}

// The routes of the fast path's answers, as the metrics name getFile's.
const (
	fastRouteGet  = "GET /v1/files/{id}"
	fastRouteHead = "HEAD /v1/files/{id}"
)

// slowHeaders are the request headers that change a file's answer (ranges, the
// conditions http.ServeContent evaluates but If-None-Match): requests with one go to
// getFile.
var slowHeaders = [...]string{"Range", "If-Range", "If-Match", "If-Modified-Since", "If-Unmodified-Since"}

// fastFileID returns the id of a request for /v1/files/{id} with no query, where id
// has only the characters of coffer's file ids (letters, digits, '-' and '_'): a
// path the ServeMux routes to getFile as it is (no cleaning, no unescaping).
func fastFileID(req *httpserve.FastRequest) (string, bool) {
	const prefix = "/v1/files/"
	path := req.Path
	if len(req.Query) > 0 || len(path) <= len(prefix) || len(path) > len(prefix)+64 || string(path[:len(prefix)]) != prefix {
		return "", false
	}
	for _, c := range path[len(prefix):] {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return "", false
		}
	}
	return string(path[len(prefix):]), true
}
