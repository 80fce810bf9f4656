package app

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
)

// testConfig returns the default configuration over a fresh data dir, with no image
// worker idle timeout, changed by set.
func testConfig(t *testing.T, set ...func(*Config)) Config {
	t.Helper()
	c := DefaultConfig()
	c.DataDir, c.ImageWorkerIdle, c.Listen = t.TempDir(), 0, "127.0.0.1:0"
	for _, f := range set {
		f(&c)
	}
	return c
}

// settingsLog builds a server from c and returns what logSettings writes.
func settingsLog(t *testing.T, c Config) string {
	t.Helper()
	t.Setenv("PATH", t.TempDir()) // no coffer-imager: images off
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	s, err := New(context.Background(), c, Parts{}, log)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	buf.Reset()
	s.logSettings()
	return buf.String()
}

func TestLogSettings(t *testing.T) {
	out := settingsLog(t, testConfig(t))
	if !strings.Contains(out, "level=WARN") || !strings.Contains(out, "no --admin-secret and no --jwt-secret") {
		t.Errorf("no warning without credentials:\n%s", out)
	}
	for _, want := range []string{`auth="anonymous as role public"`, "metadata=\"sqlite ", "blobs=\"disk ",
		`images="off (transformations answer 501)"`, `webhooks="on, 8 deliveries at once"`,
		`metrics="/metrics on the API port, admins only"`, `access_log="on, successful reads up to 100 lines/s"`, `console="on at /console/"`} {
		if !strings.Contains(out, want) {
			t.Errorf("settings line lacks %s:\n%s", want, out)
		}
	}

	out = settingsLog(t, testConfig(t, func(c *Config) {
		c.AdminSecret, c.JWTSecret = "s", `{"type":"HS256","key":"0123456789abcdef0123456789abcdef"}`
		c.MetricsListen, c.MetricsToken, c.AccessLog = "9999", "tok", "errors"
		c.Console = false
	}))
	if strings.Contains(out, "WARN") {
		t.Errorf("a warning with credentials set:\n%s", out)
	}
	for _, want := range []string{`auth="admin secret, jwt (HS256), anonymous as role public"`,
		`metrics="/metrics on 127.0.0.1:9999, bearer token"`, "access_log=errors", "console=off"} {
		if !strings.Contains(out, want) {
			t.Errorf("settings line lacks %s:\n%s", want, out)
		}
	}
	if strings.Contains(out, "0123456789abcdef") || strings.Contains(out, "tok\"") {
		t.Errorf("a secret in the log:\n%s", out)
	}
}

func TestSideAddr(t *testing.T) {
	for in, want := range map[string]string{"9090": "127.0.0.1:9090", ":9090": "127.0.0.1:9090",
		"0.0.0.0:9090": "0.0.0.0:9090", "[::1]:9090": "[::1]:9090", "localhost:1": "localhost:1"} {
		if got, err := sideAddr("--metrics-listen", in); err != nil || got != want {
			t.Errorf("sideAddr(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"a:b:c", "host:"} {
		if _, err := sideAddr("--metrics-listen", bad); err == nil {
			t.Errorf("sideAddr(%q) accepted", bad)
		}
	}
}

// TestETagValidate: --etag takes md5 and blake3 and names itself refusing others.
func TestETagValidate(t *testing.T) {
	for etag, ok := range map[string]bool{"md5": true, "blake3": true, "": false, "MD5": false, "sha256": false} {
		c := DefaultConfig()
		c.Compat.ETag = etag
		err := c.Validate()
		if ok != (err == nil) || (err != nil && !strings.Contains(err.Error(), "--etag")) {
			t.Errorf("--etag %q: Validate = %v", etag, err)
		}
	}
}
