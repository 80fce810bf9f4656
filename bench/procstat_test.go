package bench

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"
)

func TestParseStatCPU(t *testing.T) {
	tail := " S 1 2 3 4 5 6 7 8 9 10 250 130 0 0 20 0 1 0 100 200 300"
	tests := []struct {
		stat    string
		want    float64
		wantErr string
	}{
		{"123 (coffer)" + tail, 3.8, ""},
		{"123 (a b) (c)" + tail, 3.8, ""},
		{"123 coffer" + tail, 0, "no ')'"},
		{"123 (x) S 1 2", 0, "fields"},
		{"123 (x) S 1 2 3 4 5 6 7 8 9 10 x 1", 0, "not numbers"},
	}
	for _, tc := range tests {
		got, err := parseStatCPU(tc.stat)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%q: error %v, want %q", tc.stat, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got < tc.want-1e-9 || got > tc.want+1e-9 {
			t.Errorf("%q: %g, %v; want %g", tc.stat, got, err, tc.want)
		}
	}
}

func TestSamplerOwnProcessAndMetrics(t *testing.T) {
	metrics := "# HELP x\nprocess_resident_memory_bytes 1.5e+07\nprocess_cpu_seconds_total 2.5\nother 1\n"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/metrics" {
			_, _ = w.Write([]byte(metrics))
		}
	}))
	defer srv.Close()
	api := newAPIClient(srv.URL, newClient(newTransport(1), 5*time.Second), credentials{})
	s := startSampler(context.Background(), os.Getpid(), api, 10*time.Millisecond)
	time.Sleep(30 * time.Millisecond)
	proc, m := s.stop(context.Background())
	if proc == nil || proc.PeakRSSBytes <= 0 || proc.HWMBytes < proc.PeakRSSBytes/2 || proc.CPUSeconds < 0 {
		t.Errorf("proc stats %+v", proc)
	}
	if m == nil || m.PeakRSSBytes != 15e6 || m.CPUSeconds != 0 {
		t.Errorf("metrics stats %+v", m)
	}
	none := startSampler(context.Background(), 0, newAPIClient("http://127.0.0.1:1", api.client, credentials{}), time.Second)
	if p, m := none.stop(context.Background()); p != nil || m != nil {
		t.Errorf("unavailable sources gave %+v %+v", p, m)
	}
}
