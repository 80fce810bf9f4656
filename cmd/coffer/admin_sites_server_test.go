package main

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coffer/coffer/app"
	"github.com/coffer/coffer/internal/apptest"
)

// TestAdminSitesServer runs the sites and audit commands against coffer started
// through app (SQLite, 127.0.0.1): a site made from a file serves a bucket's file
// on its host, the request shows in `audit query`, and update, purge, stats and
// delete act on the real server.
func TestAdminSitesServer(t *testing.T) {
	cfg := apptest.Config(t)
	cfg.AdminSecret = "site-admin"
	m := apptest.Start(t, cfg, app.Parts{}, slog.New(slog.DiscardHandler))
	base := "http://" + m.Addr().String()
	t.Setenv("COFFER_ADMIN_SECRET", "site-admin")
	uploadSiteFile(t, base, "site/index.html", "<h1>hello</h1>")
	doc := `{"id":"www","hosts":["www.site.test"],"routes":[{"path":"/*","target":{"bucket":{"id":"default","prefix":"site/"}},
		"cacheControl":[{"match":"*.html","value":"no-cache"}]}]}`
	out, err := runAdmin(t, base, "sites", "create", "--file", writeFile(t, doc))
	if err != nil || !strings.Contains(compact(out), `"prefix":"site/"`) {
		t.Fatalf("create: %v\n%s", err, out)
	}
	body, status, hdr := getHost(t, base, "www.site.test", "/")
	if status != http.StatusOK || body != "<h1>hello</h1>" || hdr.Get("Cache-Control") != "no-cache" {
		t.Fatalf("GET / on the site: %d %q %v", status, body, hdr)
	}
	if out, err = runAdmin(t, base, "--output", "table", "sites", "list"); err != nil || !strings.Contains(out, "www.site.test") {
		t.Fatalf("list: %v\n%s", err, out)
	}
	waitAudit(t, base)
	if out, err = runAdmin(t, base, "sites", "stats", "www"); err != nil || !strings.Contains(compact(out), `"requests":1`) {
		t.Fatalf("stats: %v\n%s", err, out)
	}
	if _, err = runAdmin(t, base, "sites", "purge", "www", "--path", "/index.html"); err != nil {
		t.Fatalf("purge: %v", err)
	}
	moved := strings.Replace(doc, "www.site.test", "new.site.test", 1)
	if out, err = runAdmin(t, base, "sites", "update", "www", "--file", writeFile(t, moved)); err != nil ||
		!strings.Contains(out, "new.site.test") {
		t.Fatalf("update: %v\n%s", err, out)
	}
	if _, err = runAdmin(t, base, "sites", "delete", "www"); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if _, err = runAdmin(t, base, "sites", "get", "www"); err == nil || !strings.HasPrefix(err.Error(), "not_found") {
		t.Fatalf("get after delete: %v", err)
	}
}

// compact removes the spaces protojson varies from build to build.
func compact(s string) string { return strings.Join(strings.Fields(s), "") }

// waitAudit waits (5s at most) for `audit query` to list the site's GET /.
func waitAudit(t *testing.T, base string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		out, err := runAdmin(t, base, "--output", "table", "audit", "query", "--site", "www", "--since", "1h", "--status", "200")
		if err == nil && strings.Contains(compact(out), "GETwww.site.test/") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("audit query never listed GET /: %v\n%s", err, out)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// getHost GETs path from base with Host host.
func getHost(t *testing.T, base, host, path string) (string, int, http.Header) {
	t.Helper()
	r, _ := http.NewRequest("GET", base+path, nil)
	r.Host = host
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b), resp.StatusCode, resp.Header
}

// uploadSiteFile uploads content as name into the default bucket through /v1.
func uploadSiteFile(t *testing.T, base, name, content string) {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, _ := mw.CreateFormFile("file[]", "upload")
	_, _ = io.WriteString(fw, content)
	md, _ := json.Marshal(map[string]string{"name": name})
	_ = mw.WriteField("metadata[]", string(md))
	_ = mw.Close()
	r, _ := http.NewRequest("POST", base+"/v1/files", &body)
	r.Header.Set("Content-Type", mw.FormDataContentType())
	r.Header.Set("X-Hasura-Admin-Secret", "site-admin")
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("upload %s: %d %s", name, resp.StatusCode, b)
	}
}
