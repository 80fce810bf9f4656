package hasura

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestEmptyIDs: an empty id or path segment under /v1 is a 404 naming the cause,
// not a 405 or a redirect to another route; POST /v1/files/ stays an upload.
func TestEmptyIDs(t *testing.T) {
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(299) })
	h := emptyIDs{next}
	for _, tc := range []struct {
		method, path string
		status       int
		msg          string
	}{
		{"GET", "/v1/files/", 404, "the file id is empty"},
		{"DELETE", "/v1/files//metadata", 404, "the file id is empty"},
		{"GET", "/v1/files//presignedurl", 404, "the file id is empty"},
		{"GET", "/v1/buckets//files", 404, "has an empty segment"},
		{"GET", "/v1//files", 404, "has an empty segment"},
		{"GET", "/v1/files/x/", 404, "has an empty segment"},
		{"POST", "/v1/files/", 299, ""},
		{"GET", "/v1/files/x", 299, ""},
		{"GET", "/v1/", 299, ""},
		{"GET", "/healthz", 299, ""},
	} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(tc.method, tc.path, nil))
		if w.Code != tc.status || !strings.Contains(w.Body.String(), tc.msg) {
			t.Errorf("%s %s: %d %s, want %d with %q", tc.method, tc.path, w.Code, w.Body, tc.status, tc.msg)
		}
	}
}
