package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func runBenchCmd(t *testing.T, args ...string) (string, error) {
	t.Helper()
	root := newRootCmd()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(append([]string{"bench"}, args...))
	err := root.ExecuteContext(context.Background())
	return out.String(), err
}

func TestBenchBadFlags(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"missing target", []string{"--hold", "1s"}, "no target"},
		{"unknown scenario", []string{"--target", "http://127.0.0.1:1", "--scenario", "download_tiny"}, "unknown scenario \"download_tiny\""},
		{"malformed stages", []string{"--target", "http://127.0.0.1:1", "--stages", "10@1m,oops"}, "stages: item 2"},
		{"stages bad duration", []string{"--target", "http://127.0.0.1:1", "--stages", "10@5"}, "Go duration"},
		{"stages with ramp", []string{"--target", "http://127.0.0.1:1", "--stages", "10@1s", "--ramp", "1s"}, "replaces --ramp"},
		{"negative ramp", []string{"--target", "http://127.0.0.1:1", "--ramp", "-5s"}, "--ramp -5s must not be negative"},
		{"negative hold", []string{"--target", "http://127.0.0.1:1", "--hold", "-1m"}, "--hold -1m0s must not be negative"},
		{"not a duration", []string{"--target", "http://127.0.0.1:1", "--hold", "ten"}, "invalid argument \"ten\""},
		{"bad url", []string{"--url", "127.0.0.1/{file}"}, "want an http:// or https:// URL"},
		{"compare without b", []string{"--target", "http://127.0.0.1:1", "--compare"}, "--compare needs"},
		{"negative rate", []string{"--target", "http://127.0.0.1:1", "--rate", "-3"}, "--rate -3"},
		{"upload without target", []string{"--url", "http://127.0.0.1:1/{file}", "--scenario", "upload_small_file"}, "needs --target"},
		{"argument", []string{"--target", "http://127.0.0.1:1", "extra"}, "unknown command"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := runBenchCmd(t, tc.args...)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("error %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestBenchURLRunWritesReports(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/bench-small-100KB.bin") {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write(make([]byte, 1000))
	}))
	defer srv.Close()
	dir := t.TempDir()
	out, err := runBenchCmd(t, "--url", srv.URL+"/files/{file}", "--scenario", "download_small_file",
		"--stages", "2@100ms,2@200ms", "--interval", "100ms", "--json", filepath.Join(dir, "b.json"),
		"--html", filepath.Join(dir, "b.html"))
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(out, "download_small_file") || strings.Contains(out, "\r") {
		t.Errorf("output (no terminal, so no progress line):\n%q", out)
	}
	b, err := os.ReadFile(filepath.Join(dir, "b.json"))
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Runs []struct {
			Requests, Errors, Bytes int64
		}
	}
	if err := json.Unmarshal(b, &res); err != nil || len(res.Runs) != 1 {
		t.Fatalf("json: %v, %d runs", err, len(res.Runs))
	}
	if r := res.Runs[0]; r.Requests == 0 || r.Errors != 0 || r.Bytes != 1000*r.Requests {
		t.Errorf("run %+v", r)
	}
	if h, err := os.ReadFile(filepath.Join(dir, "b.html")); err != nil || !bytes.Contains(h, []byte("<svg")) {
		t.Errorf("html report: %v", err)
	}
}
