package httpserve_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/coffer/coffer/api"
	"github.com/coffer/coffer/internal/httpserve"
)

// RefuseUserinfo stands where a face stands (a router may put another face beside it).
var _ api.Face = httpserve.RefuseUserinfo{}

// prefixed is a face behind RefuseUserinfo.
type prefixed struct{ http.Handler }

func (prefixed) Prefixes() []string { return []string{"/v1"} }

// TestRefuseUserinfo: a target with userinfo is refused with 400 and the connection
// closed; any other goes on; the face's prefixes show through.
func TestRefuseUserinfo(t *testing.T) {
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "next") })
	h := httpserve.RefuseUserinfo{Next: prefixed{next}}
	for _, tc := range []struct {
		target string
		status int
	}{{"/v1/files", 200}, {"http://a.test/v1/files", 200}, {"http://u@a.test/v1/files", 400}, {"http://u:p@a.test/", 400}} {
		r := httptest.NewRequest("GET", "/", nil)
		u, err := url.Parse(tc.target)
		if err != nil {
			t.Fatal(err)
		}
		r.URL = u
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		refused := w.Header().Get("Connection") == "close" && strings.Contains(w.Body.String(), "userinfo")
		if w.Code != tc.status || refused != (tc.status == 400) {
			t.Errorf("%s: %d %q (Connection %q)", tc.target, w.Code, w.Body.String(), w.Header().Get("Connection"))
		}
	}
	if got := h.Prefixes(); !reflect.DeepEqual(got, []string{"/v1"}) {
		t.Errorf("Prefixes: %q", got)
	}
	if got := (httpserve.RefuseUserinfo{Next: next}).Prefixes(); got != nil {
		t.Errorf("Prefixes of a plain handler: %q", got)
	}
}

// TestDebugServer: pprof under /debug/pprof/, nothing else.
func TestDebugServer(t *testing.T) {
	srv := httptest.NewServer(httpserve.DebugServer(slog.New(slog.DiscardHandler)).Handler)
	defer srv.Close()
	for path, want := range map[string]int{"/debug/pprof/": 200, "/debug/pprof/goroutine?debug=1": 200, "/": 404, "/metrics": 404} {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("%s: %d, want %d", path, resp.StatusCode, want)
		}
	}
}
