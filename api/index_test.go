package api_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/coffer/coffer/api"
)

// TestIndex: "/" sends a browser to the console (relative to a tenant's path
// prefix) and gives any other client the JSON index; other paths stay the
// fallback's, and without the console a browser gets the JSON too.
func TestIndex(t *testing.T) {
	fallback := named{name: "hasura", prefixes: []string{"/v1/"}}
	rt, err := api.New(fallback, api.NewIndex(api.IndexInfo{Version: "v9", Console: true, RPC: []string{"coffer.admin.v1.BucketService"}}))
	if err != nil {
		t.Fatal(err)
	}
	get := func(target, accept string) *httptest.ResponseRecorder {
		r := httptest.NewRequest("GET", target, nil)
		r.Header.Set("Accept", accept)
		w := httptest.NewRecorder()
		rt.ServeHTTP(w, r)
		return w
	}
	w := get("/", "text/html,application/xhtml+xml,*/*;q=0.8")
	if w.Code != http.StatusSeeOther || w.Header().Get("Location") != "/console/" {
		t.Errorf("browser at /: %d %q, want 303 to /console/", w.Code, w.Header().Get("Location"))
	}
	r := httptest.NewRequest("GET", "/", nil)
	r.RequestURI = "/t/acme/" // as the tenant router passes it: the path past the prefix, the target as sent
	r.Header.Set("Accept", "text/html")
	w = httptest.NewRecorder()
	rt.ServeHTTP(w, r)
	if w.Header().Get("Location") != "/t/acme/console/" {
		t.Errorf("browser at /t/acme/: Location %q, want /t/acme/console/", w.Header().Get("Location"))
	}
	w = get("/", "*/*")
	var doc struct {
		Name, Version, API, OpenAPI string
		Console                     *string
		RPC                         []string
	}
	if w.Code != 200 || json.Unmarshal(w.Body.Bytes(), &doc) != nil || doc.Name != "coffer" || doc.Version != "v9" ||
		doc.Console == nil || *doc.Console != "/console/" || len(doc.RPC) != 1 || w.Header().Get("Content-Type") != "application/json" {
		t.Errorf("curl at /: %d %s", w.Code, w.Body)
	}
	if w = get("/x", "text/html"); w.Body.String() != "hasura" {
		t.Errorf("/x went to %q, want the fallback", w.Body)
	}
	off, _ := api.New(fallback, api.NewIndex(api.IndexInfo{Version: "v9"}))
	r = httptest.NewRequest("GET", "/", nil)
	r.Header.Set("Accept", "text/html")
	w = httptest.NewRecorder()
	off.ServeHTTP(w, r)
	if w.Code != 200 || json.Unmarshal(w.Body.Bytes(), &doc) != nil || doc.Console != nil {
		t.Errorf("browser at / without the console: %d %s", w.Code, w.Body)
	}
	r = httptest.NewRequest("POST", "/", nil)
	w = httptest.NewRecorder()
	rt.ServeHTTP(w, r)
	if w.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST /: %d, want 405", w.Code)
	}
}
