package httpserve_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coffer/coffer/internal/httpserve"
)

// encodeText is a face's encoder for the tests: "status: msg" in a text/x-face body.
func encodeText(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/x-face")
	w.WriteHeader(status)
	fmt.Fprintf(w, "%d: %s", status, msg)
}

// The face's encoder answers the errors of handlers it does not write (ServeContent,
// the mux) and their own bodies are dropped; successes pass through untouched, and a
// face's Answer sends a status with no body.
func TestErrorWriter(t *testing.T) {
	content := strings.NewReader("0123456789")
	mux := http.NewServeMux()
	mux.HandleFunc("GET /file", func(w http.ResponseWriter, r *http.Request) {
		http.ServeContent(w, r, "", time.Time{}, content)
	})
	mux.HandleFunc("GET /empty", func(w http.ResponseWriter, r *http.Request) {
		w.(*httpserve.ErrorWriter).Answer(http.StatusPreconditionFailed)
		_, _ = w.Write([]byte("dropped"))
	})
	for _, c := range []struct {
		method, path, rng string
		status            int
		ctype, body       string
	}{
		{"GET", "/file", "", 200, "text/plain; charset=utf-8", "0123456789"},
		{"GET", "/file", "bytes=2-4", 206, "text/plain; charset=utf-8", "234"},
		{"GET", "/file", "bytes=20-", 416, "text/x-face", "416: requested range not satisfiable"},
		{"GET", "/nowhere", "", 404, "text/x-face", "404: Not Found"},
		{"POST", "/file", "", 405, "text/x-face", "405: Method Not Allowed"},
		{"GET", "/empty", "", 412, "", ""},
	} {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(c.method, c.path, nil)
		if c.rng != "" {
			req.Header.Set("Range", c.rng)
		}
		mux.ServeHTTP(&httpserve.ErrorWriter{ResponseWriter: rec, Encode: encodeText}, req)
		if rec.Code != c.status || rec.Header().Get("Content-Type") != c.ctype || rec.Body.String() != c.body {
			t.Errorf("%s %s %q: %d %q %q, want %d %q %q", c.method, c.path, c.rng, rec.Code,
				rec.Header().Get("Content-Type"), rec.Body, c.status, c.ctype, c.body)
		}
	}
}
