package app

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/tenant"
)

// tenantTestConfig is a server config with tenants on.
func tenantTestConfig(t *testing.T) Config {
	c := DefaultConfig()
	c.Listen, c.DataDir, c.AdminSecret = "127.0.0.1:0", t.TempDir(), adminSecret
	c.Tenants = TenantsConfig{On: true, PlatformSecret: "platform-secret-0123456789",
		Key: base64.StdEncoding.EncodeToString(make([]byte, 32)), DefaultHosts: []string{"default.test"}}
	return c
}

// addTenant stores tenant id with host and admin secret straight in m's registry.
func addTenant(t *testing.T, m *Main, id, host, secret string) {
	t.Helper()
	s := &tenant.Settings{AdminSecrets: []string{secret}}
	if err := s.Prepare(m.tenancy.Sealer(), id); err != nil {
		t.Fatal(err)
	}
	doc, _ := json.Marshal(s)
	ctx := context.Background()
	if err := m.tenancy.Registry().CreateTenant(ctx, &coffer.Tenant{ID: id, Hosts: []string{host}, Settings: doc, State: coffer.TenantActive}); err != nil {
		t.Fatal(err)
	}
	if err := m.tenancy.Reload(ctx); err != nil {
		t.Fatal(err)
	}
}

// do sends a request with Host host and returns status and body.
func do(t *testing.T, base, host, method, path, body string, hdr ...string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
	req.Host = host
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestTenantsRoutedByHost: two tenants with the same bucket ids, each reached by
// its host with its own admin secret; the default tenant by its host with the
// server's; an unknown host is a bare 404.
func TestTenantsRoutedByHost(t *testing.T) {
	c := tenantTestConfig(t)
	m, base := startMain(t, c)
	addTenant(t, m, "alpha", "alpha.test", "alpha-secret-0123456")
	addTenant(t, m, "beta", "beta.test", "beta-secret-01234567")
	for host, secret := range map[string]string{"alpha.test": "alpha-secret-0123456", "beta.test": "beta-secret-01234567", "default.test": adminSecret} {
		st, body := do(t, base, host, "POST", "/v1/buckets", `{"id":"avatars"}`, "X-Hasura-Admin-Secret", secret, "Content-Type", "application/json")
		if st != http.StatusCreated {
			t.Fatalf("%s: create bucket: %d %s", host, st, body)
		}
		st, body = do(t, base, host, "GET", "/v1/buckets", "", "X-Hasura-Admin-Secret", secret)
		if st != 200 || strings.Count(body, `"avatars"`) != 1 {
			t.Errorf("%s: list buckets: %d %s", host, st, body)
		}
	}
	if st, _ := do(t, base, "beta.test", "GET", "/v1/buckets", "", "X-Hasura-Admin-Secret", "alpha-secret-0123456"); st != http.StatusUnauthorized {
		t.Errorf("alpha's secret on beta: %d", st)
	}
	if st, body := do(t, base, "nobody.test", "GET", "/v1/buckets", "", "X-Hasura-Admin-Secret", adminSecret); st != http.StatusNotFound {
		t.Errorf("unknown host: %d %s", st, body)
	}
}

// TestTenantGraphsBounded: with room for one tenant's graph, two tenants taking
// turns are each served (their graphs dropped and rebuilt), and one graph is held.
func TestTenantGraphsBounded(t *testing.T) {
	c := tenantTestConfig(t)
	c.Tenants.MaxGraphs, c.Tenants.MetricsLabels = 1, 1
	m, base := startMain(t, c)
	addTenant(t, m, "alpha", "alpha.test", "alpha-secret-0123456")
	addTenant(t, m, "beta", "beta.test", "beta-secret-01234567")
	for i := range 6 {
		host, secret := "alpha.test", "alpha-secret-0123456"
		if i%2 == 1 {
			host, secret = "beta.test", "beta-secret-01234567"
		}
		if st, body := do(t, base, host, "GET", "/v1/buckets/default", "", "X-Hasura-Admin-Secret", secret); st != http.StatusOK {
			t.Fatalf("%s, request %d: %d %s", host, i, st, body)
		}
		if n := m.tenancy.Held(); n != 1 {
			t.Fatalf("%d graphs held, want 1", n)
		}
	}
	// One label for the busiest tenant at the first scrape, "other" for the rest.
	_, body := do(t, base, "default.test", "GET", "/metrics", "", "X-Hasura-Admin-Secret", adminSecret)
	var lines []string
	for _, l := range strings.Split(body, "\n") {
		if strings.HasPrefix(l, "coffer_tenant_requests_total{") {
			lines = append(lines, l)
		}
	}
	if len(lines) != 2 || !strings.Contains(body, `coffer_tenant_requests_total{tenant="other"}`) {
		t.Errorf("tenant request counters: %q", lines)
	}
}

// TestTenantBandwidthPaced: a tenant's downloads go out at its bandwidth limit
// (a lower bound only: 192 KiB at 64 KiB/s with a one-second burst cannot take less
// than 2 s; it is not a speed test), whole and unchanged, and stay off the fast path.
func TestTenantBandwidthPaced(t *testing.T) {
	c := tenantTestConfig(t)
	m, base := startMain(t, c)
	const secret = "paced-secret-0123456"
	s := &tenant.Settings{AdminSecrets: []string{secret}, Limits: tenant.Limits{BytesPerSecond: 64 << 10}}
	if err := s.Prepare(m.tenancy.Sealer(), "paced"); err != nil {
		t.Fatal(err)
	}
	doc, _ := json.Marshal(s)
	if err := m.tenancy.Registry().CreateTenant(context.Background(), &coffer.Tenant{ID: "paced", Hosts: []string{"paced.test"}, Settings: doc}); err != nil {
		t.Fatal(err)
	}
	if err := m.tenancy.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	content := strings.Repeat("0123456789abcdef", 192<<10/16)
	id := uploadVia(t, base, "paced.test", secret, content)
	t0 := time.Now()
	st, body := do(t, base, "paced.test", "GET", "/v1/files/"+id, "", "X-Hasura-Admin-Secret", secret)
	if took := time.Since(t0); st != http.StatusOK || body != content || took < 1500*time.Millisecond {
		t.Errorf("paced download: %d, %d bytes, in %v (192 KiB at 64 KiB/s takes at least 2 s)", st, len(body), took)
	}
}

// uploadVia uploads content into host's default bucket and returns the file's id.
func uploadVia(t *testing.T, base, host, secret, content string) string {
	t.Helper()
	var b strings.Builder
	mw := multipart.NewWriter(&b)
	fw, _ := mw.CreateFormFile("file[]", "f.bin")
	io.WriteString(fw, content)
	mw.Close()
	st, body := do(t, base, host, "POST", "/v1/files", b.String(), "X-Hasura-Admin-Secret", secret, "Content-Type", mw.FormDataContentType())
	var out struct {
		ProcessedFiles []struct{ ID string } `json:"processedFiles"`
	}
	if st != http.StatusCreated || json.Unmarshal([]byte(body), &out) != nil || len(out.ProcessedFiles) != 1 {
		t.Fatalf("upload: %d %s", st, body)
	}
	return out.ProcessedFiles[0].ID
}
