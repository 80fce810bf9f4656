package service_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/service"
)

// names returns the names of a page's files.
func names(p coffer.Page) string {
	var s []string
	for _, f := range p.Files {
		s = append(s, f.Name)
	}
	return strings.Join(s, " ")
}

// named uploads one text file named name as p.
func named(t *testing.T, svc *service.Service, p *coffer.Principal, name string) *coffer.File {
	t.Helper()
	pt := text("abc")
	pt.meta = &service.UploadMeta{Name: name}
	files, err := upload(svc, p, "default", pt)
	must(t, err)
	return files[0]
}

// UpdateFile validates and normalises a new name, validates metadata and stores it
// compacted with its numbers and key order as sent, and leaves out what is not given.
func TestUpdateFileValidates(t *testing.T) {
	ctx := context.Background()
	svc, _, _ := newService(t, "")
	admin := coffer.AdminPrincipal()
	f := named(t, svc, admin, "a.txt")
	nameOf := func(s string) *string { return &s }
	for _, bad := range []string{"", `dir\a.txt`, "a\x00b", "/etc/passwd", "a\u202eb"} {
		_, err := svc.UpdateFile(ctx, admin, f.ID, nameOf(bad), nil)
		wantCode(t, "rename to "+strings.ToValidUTF8(bad, "?"), err, coffer.EINVALID)
	}
	_, err := svc.UpdateFile(ctx, admin, f.ID, nil, []byte(`"a string"`))
	wantCode(t, "metadata not an object", err, coffer.EINVALID)

	g, err := svc.UpdateFile(ctx, admin, f.ID, nameOf("cafe\u0301.txt"), []byte("{\n \"z\": 1.50e0,\n \"a\": {\"y\": 2, \"b\": 3}\n}"))
	must(t, err)
	if g.Name != "caf\u00e9.txt" || string(g.Metadata) != `{"z":1.50e0,"a":{"y":2,"b":3}}` {
		t.Fatalf("stored name %q, metadata %s", g.Name, g.Metadata)
	}
	h, err := svc.UpdateFile(ctx, admin, f.ID, nil, nil)
	must(t, err)
	if h.Name != g.Name || string(h.Metadata) != string(g.Metadata) || h.BlobKey != f.BlobKey {
		t.Fatalf("an empty update changed the file: %q %s", h.Name, h.Metadata)
	}
	_, err = svc.UpdateFile(ctx, admin, coffer.NewFileID(), nameOf("b.txt"), nil)
	wantCode(t, "update of a missing file", err, coffer.ENOTFOUND)
}

// Replacing metadata and deleting follow the role's rules: the owner may, another
// user of the same role gets "not found" (the filter matches no row), a role with no
// such permission at all gets EFORBIDDEN; a refused delete keeps row and blob.
func TestUpdateAndDeleteFollowRules(t *testing.T) {
	ctx := context.Background()
	svc, _, blobs := newService(t, ownerRules)
	u1, u2, viewer := user("u1"), user("u2"), &coffer.Principal{Role: "viewer"}
	f := named(t, svc, u1, "a.txt")
	newName := "b.txt"
	for _, p := range []*coffer.Principal{u2, viewer} {
		want := coffer.ENOTFOUND
		if p == viewer {
			want = coffer.EFORBIDDEN
		}
		_, err := svc.UpdateFile(ctx, p, f.ID, &newName, nil)
		wantCode(t, p.Role+" "+p.UserID+" renaming", err, want)
		wantCode(t, p.Role+" "+p.UserID+" deleting", svc.DeleteFile(ctx, p, f.ID), want)
	}
	if _, err := blobs.Stat(ctx, f.BlobKey); err != nil {
		t.Fatalf("blob after refused deletes: %v", err)
	}
	g, err := svc.UpdateFile(ctx, u1, f.ID, &newName, nil)
	must(t, err)
	if g.Name != newName || g.UploadedByUserID != "u1" {
		t.Fatalf("owner's rename: %q by %q", g.Name, g.UploadedByUserID)
	}
	must(t, svc.DeleteFile(ctx, u1, f.ID))
	if _, err := blobs.Stat(ctx, f.BlobKey); coffer.ErrorCode(err) != coffer.ENOTFOUND {
		t.Fatalf("blob after the owner's delete: %v", err)
	}
	wantCode(t, "deleting again", svc.DeleteFile(ctx, u1, f.ID), coffer.ENOTFOUND)
}

// A replace rule's check applies to the file as it would be stored: a rename that
// fails it is refused and changes nothing.
func TestUpdateFileCheck(t *testing.T) {
	ctx := context.Background()
	svc, _, _ := newService(t, `{"rules":[{"role":"user","buckets":["default"],"read":{},
		"replace":{"check":{"name":{"_like":"%.txt"}}}}]}`)
	f := named(t, svc, coffer.AdminPrincipal(), "a.txt")
	bad, good := "a.exe", "b.txt"
	_, err := svc.UpdateFile(ctx, user("u1"), f.ID, &bad, nil)
	wantCode(t, "rename failing the check", err, coffer.EFORBIDDEN)
	g, _, err := svc.GetFile(ctx, user("u1"), f.ID)
	must(t, err)
	if g.Name != "a.txt" {
		t.Fatalf("a refused rename stored %q", g.Name)
	}
	_, err = svc.UpdateFile(ctx, user("u1"), f.ID, &good, nil)
	must(t, err)
}

// A listing applies the role's read filter in the query: each user sees only their
// own files, page by page; admins and public buckets see all; a role that may not
// read the bucket is refused.
func TestListFilesReadFilter(t *testing.T) {
	ctx := context.Background()
	svc, _, _ := newService(t, `{"rules":[{"role":"user","buckets":["default"],
		"upload":{"presets":{"uploaded_by_user_id":"X-Hasura-User-Id"}},
		"read":{"filter":{"uploaded_by_user_id":{"_eq":"X-Hasura-User-Id"}}}}]}`)
	u1, u2 := user("u1"), user("u2")
	for _, n := range []string{"c", "a", "e"} {
		named(t, svc, u1, n)
	}
	for _, n := range []string{"b", "d"} {
		named(t, svc, u2, n)
	}
	list := func(p *coffer.Principal, limit int) string {
		var all []string
		opt := coffer.ListOptions{BucketID: "default", Limit: limit}
		for {
			page, err := svc.ListFiles(ctx, p, opt)
			must(t, err)
			if len(page.Files) > limit {
				t.Fatalf("%d files on a page of %d", len(page.Files), limit)
			}
			all = append(all, names(page))
			if opt.Cursor = page.Next; opt.Cursor == "" {
				return strings.Join(slices.DeleteFunc(all, func(s string) bool { return s == "" }), " ")
			}
		}
	}
	for _, c := range []struct {
		p    *coffer.Principal
		want string
	}{{u1, "a c e"}, {u2, "b d"}, {user("u3"), ""}, {coffer.AdminPrincipal(), "a b c d e"}} {
		for _, limit := range []int{1, 2, 1000} {
			if got := list(c.p, limit); got != c.want {
				t.Fatalf("%s lists %q by %d, want %q", c.p.UserID, got, limit, c.want)
			}
		}
	}
	_, err := svc.ListFiles(ctx, &coffer.Principal{Role: "viewer"}, coffer.ListOptions{BucketID: "default", Limit: 10})
	wantCode(t, "a role without read", err, coffer.EFORBIDDEN)
	_, err = svc.ListFiles(ctx, u1, coffer.ListOptions{BucketID: "default", Limit: 1001})
	wantCode(t, "limit above 1000", err, coffer.EINVALID)
	_, err = svc.ListFiles(ctx, u1, coffer.ListOptions{BucketID: "gone", Limit: 10})
	wantCode(t, "a missing bucket", err, coffer.ENOTFOUND)

	public := true
	_, err = svc.UpdateBucket(ctx, coffer.AdminPrincipal(), "default", coffer.BucketUpdate{Public: &public})
	must(t, err)
	if got := list(&coffer.Principal{Role: "anonymous", Anonymous: true}, 2); got != "a b c d e" {
		t.Fatalf("anonymous lists %q in a public bucket", got)
	}
}

// Rules are the admin's: a rules document is validated (an empty or null one is
// refused, so a lost body cannot clear them; errors name the path), stored, and
// installed; a refused one leaves the rules in force. {"rules": []} clears them.
func TestSetRules(t *testing.T) {
	ctx := context.Background()
	svc, m, _ := newService(t, ownerRules)
	admin := coffer.AdminPrincipal()
	inForce, err := svc.Rules(admin)
	must(t, err)
	wantCode(t, "rules read by a user", second(svc.Rules(user("u1"))), coffer.EFORBIDDEN)
	wantCode(t, "rules read anonymously", second(svc.Rules(&coffer.Principal{Anonymous: true})), coffer.EUNAUTHORIZED)
	wantCode(t, "rules set by a user", svc.SetRules(ctx, user("u1"), []byte(`{"rules":[]}`)), coffer.EFORBIDDEN)
	for doc, path := range map[string]string{
		``:                   "rules: missing",
		`null`:               "rules: missing",
		`{}`:                 "rules: missing",
		`{"rules":[],"x":1}`: "rules.x",
		`[{"role":"user","buckets":["default"],"read":{"filter":{"size":{"_gt":"big"}}}}]`: "rules[0].read.filter.size._gt",
		`{"rules":[{"role":"user","buckets":["default"]},{"role":""}]}`:                    "rules[1].role",
	} {
		err := svc.SetRules(ctx, admin, []byte(doc))
		wantCode(t, "rules "+doc, err, coffer.EINVALID)
		if !strings.Contains(err.Error(), path) {
			t.Fatalf("rules %s: %v does not name %s", doc, err, path)
		}
	}
	if got, _ := svc.Rules(admin); string(got) != string(inForce) {
		t.Fatalf("refused rules changed the rules in force to %s", got)
	}
	if stored, err := m.GetRules(ctx); err != nil || string(stored) != string(inForce) {
		t.Fatalf("stored rules %s, %v; want those in force", stored, err)
	}
	f := named(t, svc, user("u1"), "a.txt")
	must(t, svc.SetRules(ctx, admin, []byte(`{"rules": []}`)))
	if got, _ := svc.Rules(admin); string(got) != `{"rules":[]}` {
		t.Fatalf("rules after clearing: %s", got)
	}
	wantCode(t, "reading once the rules are cleared", third(svc.GetFile(ctx, user("u1"), f.ID)), coffer.EFORBIDDEN)
}

// A role that may read nothing is refused (EFORBIDDEN) whatever the file id, unless a
// public bucket exists: then every file it may not read, and every missing one, is
// "not found", and a public bucket's files are readable by anyone.
func TestUnreadableAnswer(t *testing.T) {
	ctx := context.Background()
	svc, _, _ := newService(t, "")
	admin, anonymous := coffer.AdminPrincipal(), &coffer.Principal{Role: "anonymous", Anonymous: true}
	private := named(t, svc, admin, "private.txt")
	for _, id := range []string{private.ID, coffer.NewFileID(), "not-an-id"} {
		wantCode(t, "no public bucket, "+id, third(svc.GetFile(ctx, anonymous, id)), coffer.EFORBIDDEN)
	}
	_, err := svc.CreateBucket(ctx, admin, "pub", coffer.BucketUpdate{Public: ptr(true)})
	must(t, err)
	files, err := upload(svc, admin, "pub", text("open"))
	must(t, err)
	for _, id := range []string{private.ID, coffer.NewFileID(), "not-an-id"} {
		wantCode(t, "a public bucket exists, "+id, third(svc.GetFile(ctx, anonymous, id)), coffer.ENOTFOUND)
	}
	if got := read(t, svc, anonymous, files[0].ID); got != "open" {
		t.Fatalf("anonymous read %q from the public bucket", got)
	}
}

// A listing with a delimiter shows a user the prefixes under which it may read a
// file, and no others; a delimiter other than "/" is refused.
func TestListFilesDelimiterReadFilter(t *testing.T) {
	ctx := context.Background()
	svc, _, _ := newService(t, `{"rules":[{"role":"user","buckets":["default"],
		"upload":{"presets":{"uploaded_by_user_id":"X-Hasura-User-Id"}},
		"read":{"filter":{"uploaded_by_user_id":{"_eq":"X-Hasura-User-Id"}}}}]}`)
	u1, u2 := user("u1"), user("u2")
	for _, n := range []string{"d1/a", "d3/x/y", "top", "mixed/1"} {
		named(t, svc, u1, n)
	}
	for _, n := range []string{"d2/a", "d2/b", "mixed/0", "other"} {
		named(t, svc, u2, n)
	}
	for _, c := range []struct {
		p               *coffer.Principal
		prefix          string
		files, prefixes string
	}{
		{u1, "", "top", "d1/ d3/ mixed/"},
		{u2, "", "other", "d2/ mixed/"},
		{coffer.AdminPrincipal(), "", "other top", "d1/ d2/ d3/ mixed/"},
		{u1, "d3/", "", "d3/x/"},
		{u2, "d3/", "", ""},
		{u1, "mixed/", "mixed/1", ""},
	} {
		page, err := svc.ListFiles(ctx, c.p, coffer.ListOptions{BucketID: "default", Prefix: c.prefix, Delimiter: "/"})
		must(t, err)
		if names(page) != c.files || strings.Join(page.Prefixes, " ") != c.prefixes {
			t.Errorf("%s under %q: files %q prefixes %q, want %q and %q", c.p.Role+":"+c.p.UserID, c.prefix,
				names(page), page.Prefixes, c.files, c.prefixes)
		}
	}
	_, err := svc.ListFiles(ctx, u1, coffer.ListOptions{BucketID: "default", Delimiter: "|"})
	wantCode(t, "delimiter |", err, coffer.EINVALID)
}
