package app

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestDebugListen fetches the pprof index over loopback from --debug-listen and
// checks that the API port does not serve it.
func TestDebugListen(t *testing.T) {
	m, err := New(context.Background(), testConfig(t, func(c *Config) { c.DebugListen = "127.0.0.1:0" }), Parts{}, discard())
	if err != nil {
		t.Fatal(err)
	}
	stop, err := m.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := stop(); err != nil {
			t.Errorf("stop: %v", err)
		}
	}()
	status, body := get(t, "http://"+m.DebugAddr().String()+"/debug/pprof/")
	if status != http.StatusOK || !strings.Contains(body, "goroutine") {
		t.Errorf("debug listener /debug/pprof/: %d %.200q", status, body)
	}
	if status, _ := get(t, "http://"+m.DebugAddr().String()+"/debug/pprof/goroutine?debug=1"); status != http.StatusOK {
		t.Errorf("debug listener goroutine profile: %d", status)
	}
	for _, path := range []string{"/debug/pprof/", "/debug/pprof/goroutine?debug=1"} {
		if status, body := get(t, "http://"+m.Addr().String()+path); status != http.StatusNotFound {
			t.Errorf("API port %s: %d, want 404 (%.200q)", path, status, body)
		}
	}
}

// TestDebugListenOff checks that the debug listener is off by default.
func TestDebugListenOff(t *testing.T) {
	if d := DefaultConfig().DebugListen; d != "" {
		t.Errorf("default --debug-listen %q", d)
	}
	m, err := New(context.Background(), testConfig(t), Parts{}, discard())
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if m.debugHTTP != nil {
		t.Error("a debug server without --debug-listen")
	}
}

// TestDebugListenValidate checks the address forms and the refusals of the API's
// and the metrics' addresses.
func TestDebugListenValidate(t *testing.T) {
	for _, tc := range []struct{ listen, metrics, debug, want string }{
		{"127.0.0.1:8000", "", "6060", "127.0.0.1:6060"},
		{"127.0.0.1:8000", "", "[::1]:6060", "[::1]:6060"},
		{"127.0.0.1:8000", "", "8000", ""},
		{"127.0.0.1:8000", "", "127.0.0.1:8000", ""},
		{"0.0.0.0:8000", "", "127.0.0.1:8000", ""},
		{":8000", "", "8000", ""},
		{"127.0.0.1:8000", "9090", ":9090", ""},
		{"127.0.0.1:8000", "", "a:b:c", ""},
	} {
		c := DefaultConfig()
		c.Listen, c.MetricsListen, c.DebugListen = tc.listen, tc.metrics, tc.debug
		err := c.Validate()
		if tc.want == "" && err == nil {
			t.Errorf("listen %q metrics %q debug %q accepted as %q", tc.listen, tc.metrics, tc.debug, c.DebugListen)
		}
		if tc.want != "" && (err != nil || c.DebugListen != tc.want) {
			t.Errorf("debug %q = %q, %v; want %q", tc.debug, c.DebugListen, err, tc.want)
		}
	}
}

// get fetches url and returns its status and body.
func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}
