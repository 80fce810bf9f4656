package hasura

import (
	"net/http"
	"strings"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/internal/httpserve"
)

// emptyIDs answers 404, naming the cause, a /v1 path with an empty segment
// ("/v1/files//metadata", "/v1/buckets//files") or an empty id ("GET
// /v1/files/"), which the routes would otherwise answer with a 405 or a
// redirect to another route (ServeMux cleans "//" to "/"); the rest goes to
// next. "POST /v1/files/" stays an upload, as in hasura-storage.
type emptyIDs struct{ next http.Handler }

// ServeHTTP implements http.Handler.
func (e emptyIDs) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := r.URL.Path
	if rest, ok := strings.CutPrefix(path, "/v1"); ok && emptySegment(rest) && !(r.Method == http.MethodPost && path == "/v1/files/") {
		what := "the path " + quotePath(path) + " has an empty segment"
		if path == "/v1/files/" || strings.HasPrefix(path, "/v1/files//") {
			what = "file not found: the file id is empty (" + quotePath(path) + ")"
		}
		if st := httpserve.StateOf(r); st != nil {
			w = &st.W // the Frame's writer: this answer is the face's, not the mux's own 404
		}
		writeError(w, r, coffer.Errorf(coffer.ENOTFOUND, "%s", what))
		return
	}
	e.next.ServeHTTP(w, r)
}

// emptySegment reports whether rest (a path past "/v1") has an empty segment:
// "//" anywhere, or a trailing "/" after a collection ("/files/", "/buckets/").
func emptySegment(rest string) bool {
	return strings.Contains(rest, "//") || len(rest) > 1 && strings.HasSuffix(rest, "/")
}

// quotePath quotes a path for a message, cut to 100 bytes.
func quotePath(p string) string {
	if len(p) > 100 {
		p = p[:100] + "..."
	}
	return `"` + strings.ToValidUTF8(p, "?") + `"`
}
