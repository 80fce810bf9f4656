package main

import (
	"maps"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/coffer/coffer/app"
	"github.com/spf13/pflag"
)

// serveDefaults are the flag defaults `coffer serve` had before the app package
// existed.
var serveDefaults = map[string]string{
	"access-log":               "on",
	"access-log-reads-per-sec": "100",
	"admin-secret":             "",
	"platform-secret":          "",
	"tenant-key":               "",
	"tenant-graphs":            "256",
	"tenant-metrics-labels":    "50",
	"tenant-path-prefix":       "false",
	"tenant-wildcards":         "[]",
	"tenants":                  "false",
	"sites":                    "true",
	"sites-refresh":            "5s",
	"edge-cache-dir":           "",
	"edge-cache-size":          "1073741824",
	"edge-max-object":          "268435456",
	"audit-dir":                "",
	"audit-size":               "1073741824",
	"audit-collector":          "",
	"trusted-proxies":          "[]",
	"clamav-addr":              "",
	"clamav-fail-open":         "false",
	"clamav-timeout":           "2m0s",
	"console":                  "true",
	"content-cache-max-file":   "1048576",
	"content-cache-size":       "268435456",
	"data-dir":                 "./data",
	"default-tenant-hosts":     "[]",
	"database-url":             "",
	"gc-heap-floor":            "16777216",
	"h2c":                      "false",
	"fast-path":                "true",
	"etag":                     "md5",
	"hide-forbidden":           "false",
	"image-max-bytes":          "67108864",
	"image-max-cost":           "2000000000",
	"image-max-pixels":         "50000000",
	"image-queue":              "64",
	"image-timeout":            "10s",
	"image-user-queue":         "8",
	"image-workers-remote":     "",
	"image-workers-secret":     "",
	"image-workers-tls-ca":     "",
	"image-workers-tls-cert":   "",
	"image-workers-tls-key":    "",
	"image-user-workers":       "0",
	"image-worker":             "",
	"image-worker-idle":        "5m0s",
	"image-workers":            strconv.Itoa(runtime.NumCPU()),
	"jwt-admin-role":           "true",
	"jwt-secret":               "",
	"listen":                   "127.0.0.1:8000",
	"log-format":               "json",
	"log-level":                "info",
	"meta-cache-files":         "100000",
	"meta-cache-ttl":           "5m0s",
	"metrics-listen":           "",
	"metrics-token":            "",
	"debug-listen":             "",
	"presign-previous-secrets": "[]",
	"presign-secret":           "",
	"public-url":               "",
	"rules":                    "",
	"s3-access-key":            "",
	"s3-bucket":                "",
	"s3-endpoint":              "",
	"s3-path-style":            "true",
	"s3-region":                "us-east-1",
	"s3-secret-key":            "",
	"shutdown-timeout":         "30s",
	"stale-upload-after":       "24h0m0s",
	"sweep-interval":           "1h0m0s",
	"unauthorized-role":        "public",
	"variant-cache-size":       "67108864",
	"variants-per-file":        "20",
	"webhook-allow-networks":   "[]",
	"webhook-max-attempts":     "10",
	"webhook-retention":        "168h0m0s",
	"webhook-timeout":          "5s",
	"webhook-workers":          "8",
}

// The flags' defaults are app.DefaultConfig, so `coffer serve` without flags runs the
// configuration tests start from, and they are the defaults serve always had.
func TestFlagDefaults(t *testing.T) {
	c := &serveConfig{}
	fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	c.storeFlags(fs)
	c.serveFlags(fs)
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	want := app.DefaultConfig()
	want.Version = ""
	if !reflect.DeepEqual(c.Config, want) {
		t.Errorf("flag defaults:\n%+v\nwant app.DefaultConfig():\n%+v", c.Config, want)
	}
	defaults := maps.Clone(serveDefaults)
	fs.VisitAll(func(f *pflag.Flag) {
		if want, ok := defaults[f.Name]; !ok || f.DefValue != want {
			t.Errorf("--%s: default %q, want %q", f.Name, f.DefValue, want)
		}
		delete(defaults, f.Name)
	})
	if len(defaults) > 0 {
		t.Errorf("flags gone: %v", defaults)
	}
	if c.LogLevel != "info" || c.LogFormat != "json" || c.GCHeapFloor != 16<<20 {
		t.Errorf("process defaults: %q %q %d", c.LogLevel, c.LogFormat, c.GCHeapFloor)
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
