package httpserve_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coffer/coffer/internal/httpserve"
)

// Writer records the status sent and the body bytes however the body is written, and
// sends Server-Timing with the "app" entry.
func TestWriter(t *testing.T) {
	for name, write := range map[string]func(w *httpserve.Writer){
		"write":    func(w *httpserve.Writer) { _, _ = w.Write([]byte("hello")) },
		"readfrom": func(w *httpserve.Writer) { _, _ = w.ReadFrom(strings.NewReader("hello")) },
		"status":   func(w *httpserve.Writer) { w.WriteHeader(201); w.WriteHeader(500); _, _ = w.Write([]byte("hello")) },
	} {
		rec := httptest.NewRecorder()
		var w httpserve.Writer
		w.Init(rec, httptest.NewRequest("GET", "/", nil), time.Now(), time.Minute)
		write(&w)
		want := http.StatusOK
		if name == "status" { // the first status is the one sent
			want = http.StatusCreated
		}
		if w.Status != want || w.Bytes != 5 || rec.Body.String() != "hello" {
			t.Errorf("%s: status %d, bytes %d, body %q", name, w.Status, w.Bytes, rec.Body)
		}
		if st := rec.Header().Get("Server-Timing"); !strings.HasPrefix(st, "app;") {
			t.Errorf("%s: Server-Timing %q", name, st)
		}
	}
}
