package app

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/coffer/coffer/api"
)

// The throwaway face below is added to every tenant's graph by this one line.
func init() { faces = append(faces, throwawayFace) }

// throwawayFace is a face for TestFaceAddedInOneLine: it answers /throwaway/ with
// the id of the tenant whose graph it is in.
func throwawayFace(_ *Main, g *graph) (api.Face, error) { return echoFace(g.tenant), nil }

type echoFace string

func (echoFace) Prefixes() []string { return []string{"/throwaway/"} }

func (f echoFace) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	fmt.Fprintf(w, "throwaway face of tenant %q", string(f))
}

// TestFaceAddedInOneLine: a face added to the faces list with one line (the init
// above) is served for the default tenant and for a host-routed tenant made
// through TenantService, each by its own graph.
func TestFaceAddedInOneLine(t *testing.T) {
	m, base := startMain(t, tenantTestConfig(t))
	st, body := do(t, base, "default.test", "POST", "/coffer.admin.v1.TenantService/CreateTenant",
		`{"id":"acme","hosts":["acme.test"],"settings":{"adminSecrets":["acme-secret-0123456789"]}}`,
		"Content-Type", "application/json", "X-Coffer-Platform-Secret", m.cfg.Tenants.PlatformSecret)
	if st != http.StatusOK {
		t.Fatalf("CreateTenant: %d %s", st, body)
	}
	for host, want := range map[string]string{"default.test": `throwaway face of tenant ""`, "acme.test": `throwaway face of tenant "acme"`} {
		if st, body := do(t, base, host, "GET", "/throwaway/x", ""); st != http.StatusOK || body != want {
			t.Errorf("%s /throwaway/x: %d %q, want 200 %q", host, st, body, want)
		}
	}
}
