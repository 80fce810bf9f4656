package main

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// testConfig returns the serve configuration that args give, over a fresh data dir.
func testConfig(t *testing.T, args ...string) *serveConfig {
	t.Helper()
	c := &serveConfig{}
	fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	c.storeFlags(fs)
	c.serveFlags(fs)
	if err := fs.Parse(append([]string{"--data-dir", t.TempDir(), "--image-worker-idle", "0"}, args...)); err != nil {
		t.Fatal(err)
	}
	if err := c.validate(); err != nil {
		t.Fatal(err)
	}
	return c
}

// settingsLog builds a server from args and returns what logSettings writes.
func settingsLog(t *testing.T, args ...string) string {
	t.Helper()
	t.Setenv("PATH", t.TempDir()) // no coffer-imager: images off
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	s, err := newServer(context.Background(), testConfig(t, args...), log)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	buf.Reset()
	s.logSettings()
	return buf.String()
}

func TestLogSettings(t *testing.T) {
	out := settingsLog(t)
	if !strings.Contains(out, "level=WARN") || !strings.Contains(out, "no --admin-secret and no --jwt-secret") {
		t.Errorf("no warning without credentials:\n%s", out)
	}
	for _, want := range []string{`auth="anonymous as role public"`, "metadata=\"sqlite ", "blobs=\"disk ",
		`images="off (transformations answer 501)"`, `webhooks="on, 8 deliveries at once"`,
		`metrics="/metrics on the API port, admins only"`, `access_log="on, successful reads up to 100 lines/s"`} {
		if !strings.Contains(out, want) {
			t.Errorf("settings line lacks %s:\n%s", want, out)
		}
	}

	out = settingsLog(t, "--admin-secret", "s", "--jwt-secret", `{"type":"HS256","key":"0123456789abcdef0123456789abcdef"}`,
		"--metrics-listen", "9999", "--metrics-token", "tok", "--access-log", "errors")
	if strings.Contains(out, "WARN") {
		t.Errorf("a warning with credentials set:\n%s", out)
	}
	for _, want := range []string{`auth="admin secret, jwt (HS256), anonymous as role public"`,
		`metrics="/metrics on 127.0.0.1:9999, bearer token"`, "access_log=errors"} {
		if !strings.Contains(out, want) {
			t.Errorf("settings line lacks %s:\n%s", want, out)
		}
	}
	if strings.Contains(out, "0123456789abcdef") || strings.Contains(out, "tok\"") {
		t.Errorf("a secret in the log:\n%s", out)
	}
}

func TestMetricsAddr(t *testing.T) {
	for in, want := range map[string]string{"9090": "127.0.0.1:9090", ":9090": "127.0.0.1:9090",
		"0.0.0.0:9090": "0.0.0.0:9090", "[::1]:9090": "[::1]:9090", "localhost:1": "localhost:1"} {
		if got, err := metricsAddr(in); err != nil || got != want {
			t.Errorf("metricsAddr(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"a:b:c", "host:"} {
		if _, err := metricsAddr(bad); err == nil {
			t.Errorf("metricsAddr(%q) accepted", bad)
		}
	}
}

// pflag appends "(default X)" to a flag's help by itself: a help text that says its
// own default as well shows two.
func TestFlagHelpStatesDefaultOnce(t *testing.T) {
	cmd := newServeCmd()
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if strings.Contains(f.Usage, "(default") {
			t.Errorf("--%s: help says its default itself: %q", f.Name, f.Usage)
		}
	})
	help := cmd.Flags().FlagUsagesWrapped(0)
	for _, l := range strings.Split(help, "\n") {
		if strings.Count(l, "(default") > 1 {
			t.Errorf("two defaults: %s", l)
		}
	}
}
