package e2e

import (
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
)

// TestMetricsListen: with --metrics-listen PORT and --metrics-token, /metrics leaves
// the API port and is served on 127.0.0.1:PORT to the token's bearer only.
func TestMetricsListen(t *testing.T) {
	_, port, _ := net.SplitHostPort(freeAddr(t))
	p := start(t, "COFFER_DATA_DIR="+t.TempDir(), "COFFER_METRICS_LISTEN="+port, "COFFER_METRICS_TOKEN=e2e-scrape")
	if got := p.status("GET", "/metrics", nil); got != http.StatusNotFound {
		t.Errorf("API port /metrics: %d, want 404", got)
	}
	get := func(hdr ...string) (int, string) {
		req, _ := http.NewRequest("GET", "http://127.0.0.1:"+port+"/metrics", nil)
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
	if code, _ := get(); code != http.StatusUnauthorized {
		t.Errorf("metrics listener without the token: %d, want 401", code)
	}
	code, body := get("Authorization", "Bearer e2e-scrape")
	if code != http.StatusOK || !strings.Contains(body, `coffer_http_request_duration_seconds_count{method="GET",route="unmatched",status="404"}`) {
		t.Errorf("metrics listener with the token: %d\n%s", code, body)
	}
}
