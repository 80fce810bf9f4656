package hostile

import (
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/imaging/imagingtest"
)

// idRoute is a request that addresses a file by id.
type idRoute struct {
	name, method, path string // path with {id}
	body               func() (io.Reader, []string)
}

// idRoutes are the API's requests that address a file by id.
func idRoutes() []idRoute {
	none := func() (io.Reader, []string) { return nil, nil }
	patch := func() (io.Reader, []string) {
		return strings.NewReader(`{"name":"renamed"}`), []string{"Content-Type", "application/json"}
	}
	replace := func() (io.Reader, []string) {
		b, ct := multipartBody(part{field: "file", filename: "r.bin", body: []byte("replaced")})
		return b, []string{"Content-Type", ct}
	}
	return []idRoute{
		{"get", "GET", "/v1/files/{id}", none},
		{"get-range", "GET", "/v1/files/{id}", func() (io.Reader, []string) { return nil, []string{"Range", "bytes=0-1"} }},
		{"get-conditional", "GET", "/v1/files/{id}", func() (io.Reader, []string) { return nil, []string{"If-None-Match", `"x"`} }},
		{"head", "HEAD", "/v1/files/{id}", none},
		{"transform", "GET", "/v1/files/{id}?w=8&h=8", none},
		{"replace", "PUT", "/v1/files/{id}", replace},
		{"delete", "DELETE", "/v1/files/{id}", none},
		{"metadata", "GET", "/v1/files/{id}/metadata", none},
		{"metadata-update", "PATCH", "/v1/files/{id}/metadata", patch},
		{"presign", "GET", "/v1/files/{id}/presignedurl", none},
		{"presign-transform", "GET", "/v1/files/{id}/presignedurl?w=8", none},
		{"presigned-forged", "GET", "/v1/files/{id}/presignedurl/contents?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Signature=00", none},
		{"presigned-legacy-forged", "GET", "/v1/files/{id}/presignedurl/contents?X-Coffer-Expires=9999999999&X-Coffer-Key-Id=k1&X-Coffer-Signature=00", none},
	}
}

// volatile headers differ between any two answers.
var volatile = []string{"Date", "X-Request-Id", "Server-Timing"}

// TestForbiddenLooksMissing: for every request that addresses a file by id, a user
// whose rules grant the action on their own files (and a caller without a token)
// gets the same answer (status, body and headers, the id aside) for another user's
// file in each bucket as for an id that does not exist.
func TestForbiddenLooksMissing(t *testing.T) {
	s := newServer(t)
	tl := s.tally("403-vs-404")
	jpg := imagingtest.JPEG(16, 16)
	s.mustUpload("bob", "priv", "bobs.jpg", jpg) // bob has files of his own
	for _, bucket := range []string{"priv", "inline", "signed"} {
		for _, caller := range []string{"bob", ""} {
			for _, rt := range idRoutes() {
				alices := s.mustUpload("alice", bucket, "alices.jpg", jpg)
				what := fmt.Sprintf("%s %s by %q in %s", rt.name, rt.method, caller, bucket)
				hidden, missing := s.byID(rt, caller, alices), s.byID(rt, caller, coffer.NewFileID())
				tl.probe(what+" (another user's file)", hidden, "")
				tl.probe(what+" (missing file)", missing, sameAnswer(hidden, missing))
			}
		}
	}
}

// byID sends route rt for file id as user ("" = no token), the id in the answer
// replaced by {id}.
func (s *server) byID(rt idRoute, user, id string) answer {
	body, hdr := rt.body()
	if user != "" {
		hdr = append(hdr, as(user)...)
	}
	a := s.do(rt.method, strings.ReplaceAll(rt.path, "{id}", id), body, hdr...)
	a.body = []byte(strings.ReplaceAll(string(a.body), id, "{id}"))
	for k, vs := range a.header {
		for i := range vs {
			vs[i] = strings.ReplaceAll(vs[i], id, "{id}")
		}
		a.header[k] = vs
	}
	return a
}

// sameAnswer says how two answers differ ("" if they do not): status, body, and
// every header but the volatile ones.
func sameAnswer(a, b answer) string {
	if a.status != b.status || string(a.body) != string(b.body) {
		return fmt.Sprintf("answers %d %s for an existing file", a.status, strings.TrimSpace(string(a.body)))
	}
	for k := range joinKeys(a.header, b.header) {
		if slices.Contains(volatile, k) {
			continue
		}
		if !slices.Equal(a.header[k], b.header[k]) {
			return fmt.Sprintf("header %s is %q for an existing file, %q for a missing one", k, a.header[k], b.header[k])
		}
	}
	return ""
}

// joinKeys returns the header names of a and b.
func joinKeys(a, b http.Header) map[string]bool {
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	return keys
}

// TestTakenIDAnswersAlike: a user who uploads with a client-chosen id that is taken
// gets the same answer (status and body, byte for byte: it cannot even repeat the
// id) whether the file is their own or another user's they cannot read, in any
// bucket, and the answer is a refusal (D4).
func TestTakenIDAnswersAlike(t *testing.T) {
	s := newServer(t)
	tl := s.tally("taken-id")
	for _, bucket := range []string{"priv", "inline", "signed"} {
		bobs := s.mustUpload("bob", bucket, "b.txt", []byte("bob"))
		alices := s.mustUpload("alice", bucket, "a.txt", []byte("alice"))
		for _, into := range []string{"priv", "inline", "signed"} {
			what := fmt.Sprintf("bob uploads into %s with the id of a file in %s", into, bucket)
			own := s.uploadNamed("bob", into, bobs, "mine.txt", []byte("x"))
			other := s.uploadNamed("bob", into, alices, "mine.txt", []byte("x"))
			wrong := ""
			switch {
			case other.status < 300 || own.status < 300:
				wrong = fmt.Sprintf("a taken id was accepted (own %d, other's %d)", own.status, other.status)
			case own.status != other.status || string(own.body) != string(other.body):
				wrong = fmt.Sprintf("taken by bob: %d %s; taken by alice", own.status, strings.TrimSpace(string(own.body)))
			}
			tl.probe(what+" (own)", own, "")
			tl.probe(what+" (alice's)", other, wrong)
		}
	}
}
