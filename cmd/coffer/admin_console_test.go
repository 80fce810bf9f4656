package main

import (
	"encoding/json"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/coffer/coffer/app"
	"github.com/coffer/coffer/internal/apptest"
	adminv1 "github.com/coffer/coffer/proto/gen/coffer/admin/v1"
)

// TestAdminConsoleCalls runs `files list --delimiter`, `files presign --expires` and
// `rules check` against coffer started through app (uploadSiteFile's admin secret).
func TestAdminConsoleCalls(t *testing.T) {
	cfg := apptest.Config(t)
	cfg.AdminSecret = "site-admin"
	m := apptest.Start(t, cfg, app.Parts{}, slog.New(slog.DiscardHandler))
	base := "http://" + m.Addr().String()
	t.Setenv("COFFER_ADMIN_SECRET", "site-admin")
	for _, n := range []string{"a/1.txt", "a/2.txt", "b.txt", "c/d/e.txt"} {
		uploadSiteFile(t, base, n, "x")
	}
	out, err := runAdmin(t, base, "--output", "table", "files", "list", "default", "--delimiter", "/")
	if err != nil {
		t.Fatalf("list: %v\n%s", err, out)
	}
	var order []string
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) >= 3 && f[1] == "default" {
			order = append(order, f[0][:min(len(f[0]), 6)]+" "+f[2])
		}
	}
	if len(order) != 3 || order[0] != "PREFIX a/" || !strings.HasSuffix(order[1], " b.txt") || order[2] != "PREFIX c/" {
		t.Fatalf("list --delimiter /: %q\n%s", order, out)
	}
	out, err = runAdmin(t, base, "files", "list", "default")
	var page struct{ Files []struct{ ID string } }
	if err != nil || json.Unmarshal([]byte(out), &page) != nil || len(page.Files) != 4 {
		t.Fatalf("list: %v\n%s", err, out)
	}
	out, err = runAdmin(t, base, "files", "presign", page.Files[0].ID, "--expires", "7s")
	if err != nil || !strings.Contains(compact(out), `"expiresInSeconds":7`) || !strings.Contains(out, "X-Amz-Expires=7") {
		t.Fatalf("presign --expires 7s: %v\n%s", err, out)
	}
	// Above the bucket's download expiration (30 s): the URL is capped, and stderr says so.
	out, err = runAdmin(t, base, "files", "presign", page.Files[0].ID, "--expires", "1h")
	if err != nil || !strings.Contains(out, "the URL lives 30s, not the 3600s asked") || !strings.Contains(out, "X-Amz-Expires=30") {
		t.Fatalf("presign --expires 1h: %v\n%s", err, out)
	}
	out, err = runAdmin(t, base, "rules", "check", "--role", "user", "--action", "read", "--bucket", "default", "--session", "x-hasura-org=o")
	if err != nil || !strings.Contains(out, "no rule for role user on bucket default") {
		t.Fatalf("rules check: %v\n%s", err, out)
	}
	if _, err = runAdmin(t, base, "rules", "check", "--role", "user", "--action", "write", "--bucket", "default"); err == nil ||
		!strings.HasPrefix(err.Error(), "invalid_argument") {
		t.Fatalf("rules check --action write: %v", err)
	}
}

// listingRows puts prefixes among files by name.
func TestListingRows(t *testing.T) {
	fs := []*adminv1.File{{Id: "1", Name: "a.txt"}, {Id: "2", Name: "a0"}, {Id: "3", Name: "b"}}
	rows := listingRows("bk", fs, []string{"a/", "c/"})
	var got []string
	for _, r := range rows[1:] {
		got = append(got, r[0]+":"+r[2])
	}
	if want := []string{"1:a.txt", "PREFIX:a/", "2:a0", "3:b", "PREFIX:c/"}; !slices.Equal(got, want) {
		t.Fatalf("rows %q, want %q", got, want)
	}
}
