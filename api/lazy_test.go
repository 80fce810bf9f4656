package api

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/internal/httpserve"
)

// TestLazy: a Lazy face refuses without being built, is built once on its first
// request, and answers 503 with its message when building failed.
func TestLazy(t *testing.T) {
	builds := 0
	refusal := func(w http.ResponseWriter, _ *http.Request, err error) {
		http.Error(w, coffer.ErrorMessage(err), httpserve.StatusOf(err))
	}
	ok := &Lazy{Paths: []string{"/rpc/"}, Refusal: refusal, Unavailable: "down", Build: func() (http.Handler, error) {
		builds++
		return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusTeapot) }), nil
	}}
	rec := httptest.NewRecorder()
	ok.Refuse(rec, httptest.NewRequest("GET", "/rpc/x", nil), coffer.Errorf(coffer.ETOOMANY, "slow down"))
	if rec.Code != http.StatusTooManyRequests || builds != 0 {
		t.Errorf("refusal: %d after %d builds, want 429 unbuilt", rec.Code, builds)
	}
	for range 2 {
		rec = httptest.NewRecorder()
		ok.ServeHTTP(rec, httptest.NewRequest("GET", "/rpc/x", nil))
		if rec.Code != http.StatusTeapot || builds != 1 {
			t.Errorf("request: %d after %d builds, want 418 after 1", rec.Code, builds)
		}
	}
	bad := &Lazy{Refusal: refusal, Unavailable: "down", Build: func() (http.Handler, error) { return nil, errors.New("no") }}
	rec = httptest.NewRecorder()
	bad.ServeHTTP(rec, httptest.NewRequest("GET", "/rpc/x", nil))
	if rec.Code != http.StatusServiceUnavailable || rec.Body.String() != "down\n" {
		t.Errorf("failed build: %d %q, want 503 down", rec.Code, rec.Body.String())
	}
}
