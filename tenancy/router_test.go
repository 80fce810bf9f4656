package tenancy_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/auth"
	"github.com/coffer/coffer/internal/httpserve"
	"github.com/coffer/coffer/meta/sqlite"
	"github.com/coffer/coffer/tenancy"
)

// faces are a tenant's faces in these tests: they name the tenant in every answer
// and refusal, so a test sees whose faces answered.
type faces string

func (f faces) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	fmt.Fprintf(w, "%s served", string(f))
}

func (faces) ServeFast(*httpserve.FastRequest, *httpserve.FastWriter) bool { return false }

func (f faces) RefuseAt(w http.ResponseWriter, _ *http.Request, path string, err error) {
	w.WriteHeader(httpserve.StatusOf(err))
	fmt.Fprintf(w, "%s refused %s", string(f), path)
}

// nopCache is a metadata cache with nothing to drop.
type nopCache struct{}

func (nopCache) OnTenantChanged(func(string)) {}
func (nopCache) OnTenantGone(func(string))    {}
func (nopCache) DropTenant(string)            {}

// newRuntime returns a runtime over a new SQLite store holding the tenants of
// settings (id → settings document, host <id>.test), room for maxGraphs graphs,
// and a count of the graphs built; its graphs' faces are faces.
func newRuntime(t *testing.T, maxGraphs int, settings map[string]string) (*tenancy.Runtime, *int) {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "coffer.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	for id, doc := range settings {
		if err := st.CreateTenant(ctx, &coffer.Tenant{ID: id, Hosts: []string{id + ".test"}, Settings: []byte(doc), State: coffer.TenantActive}); err != nil {
			t.Fatal(err)
		}
	}
	builds := 0
	build := func(_ context.Context, tn *coffer.Tenant, _ tenancy.Settings) (*tenancy.Graph, error) {
		builds++
		authn, err := auth.New(auth.DefaultConfig())
		return &tenancy.Graph{Auth: authn, Faces: faces(tn.ID)}, err
	}
	cfg := tenancy.Config{On: true, PlatformSecret: "platform", Key: base64.StdEncoding.EncodeToString(make([]byte, 32)),
		DefaultHosts: []string{"default.test"}, MaxGraphs: maxGraphs}
	rt, err := tenancy.New(ctx, cfg, tenancy.Deps{Store: st, Cache: nopCache{}, Build: build, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return rt, &builds
}

// get sends GET path with Host host to h and returns the status and body.
func get(h http.Handler, host, path string) (int, string) {
	r := httptest.NewRequest("GET", "http://"+host+path, nil)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	b, _ := io.ReadAll(w.Result().Body)
	return w.Code, string(b)
}

// TestRouterRefusesInTheFacesOfThePath: the router hands each request to its
// tenant's faces; what it refuses is written by faces too: an unknown host's and
// a suspended tenant's by the default tenant's, a request over its tenant's rate
// limit by that tenant's. It holds at most MaxGraphs graphs.
func TestRouterRefusesInTheFacesOfThePath(t *testing.T) {
	rt, builds := newRuntime(t, 1, map[string]string{"a": "{}", "b": "{}", "slow": `{"limits":{"requestsPerSecond":1,"burst":1}}`})
	router := rt.Router(faces("default"))
	for _, c := range []struct {
		host   string
		status int
		body   string
	}{
		{"default.test", 200, "default served"}, {"a.test", 200, "a served"}, {"b.test", 200, "b served"},
		{"a.test", 200, "a served"}, {"nobody.test", 404, "default refused /x"},
		{"slow.test", 200, "slow served"}, {"slow.test", 429, "slow refused /x"},
	} {
		if st, body := get(router, c.host, "/x"); st != c.status || body != c.body {
			t.Errorf("%s: %d %q, want %d %q", c.host, st, body, c.status, c.body)
		}
	}
	if rt.Held() != 1 || *builds != 4 {
		t.Errorf("%d graphs held after %d builds, want 1 after 4 (a, b, a again, slow)", rt.Held(), *builds)
	}
	suspended := coffer.TenantSuspended
	if _, err := rt.Registry().UpdateTenant(context.Background(), "a", coffer.TenantUpdate{State: &suspended}); err != nil {
		t.Fatal(err)
	}
	if err := rt.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st, body := get(router, "a.test", "/x"); st != 403 || body != "default refused /x" {
		t.Errorf("suspended tenant: %d %q, want 403 refused by the default tenant's faces", st, body)
	}
}
