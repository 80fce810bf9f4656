package hasura_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"
)

// FuzzUploadBody feeds arbitrary multipart bodies to the upload route: whatever the
// input, the answer is never a 5xx and never a panic.
func FuzzUploadBody(f *testing.F) {
	body, _ := multipartBody(part{field: "bucket-id", body: []byte("default")},
		part{field: "file[]", filename: "a.txt", body: []byte("hello")},
		part{field: "metadata[]", body: []byte(`{"name":"x/y.txt","metadata":{"a":1}}`)})
	f.Add(body.Bytes())
	f.Add([]byte("--X\r\nContent-Disposition: form-data; name=\"file[]\"; filename=\"a\"\r\n\r\nabc\r\n--X--\r\n"))
	f.Add([]byte("--X\r\n\r\n--X--"))
	e := newEnv(f)
	h := e.srv.Handler
	boundary := multipartBoundary(body.Bytes())
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, ct := range []string{"multipart/form-data; boundary=X", "multipart/form-data; boundary=" + boundary} {
			req := httptest.NewRequest("POST", "/v1/files", bytes.NewReader(b))
			req.Header.Set("Content-Type", ct)
			req.Header.Set("X-Hasura-Admin-Secret", adminSecret)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code >= 500 || (rec.Code != http.StatusCreated && rec.Code < 400) {
				t.Fatalf("status %d for body %q: %s", rec.Code, b, rec.Body.String())
			}
		}
	})
}

func multipartBoundary(body []byte) string {
	line, _, _ := bytes.Cut(body, []byte("\r\n"))
	return string(bytes.TrimPrefix(line, []byte("--")))
}
