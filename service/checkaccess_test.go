package service_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/blob"
	"github.com/coffer/coffer/blob/memblob"
	"github.com/coffer/coffer/service"
)

// checkRules: users own their files in default (read, delete by owner; uploads preset
// to them, at most 10 bytes, named *.txt; renames must stay *.txt); viewers read
// bucket pics only, which the first rule for them decides; role noop has a rule for
// default without actions; role deleter may delete in default but not read.
const checkRules = `{"rules":[
 {"role":"user","buckets":["default"],
  "upload":{"presets":{"uploaded_by_user_id":"X-Hasura-User-Id"},"max_size":10,"check":{"name":{"_like":"%.txt"}}},
  "read":{"filter":{"uploaded_by_user_id":{"_eq":"X-Hasura-User-Id"}}},
  "update":{"filter":{"uploaded_by_user_id":{"_eq":"X-Hasura-User-Id"}},"check":{"name":{"_like":"%.txt"}}},
  "delete":{"filter":{"uploaded_by_user_id":{"_eq":"X-Hasura-User-Id"}}}},
 {"role":"org","buckets":["default"],"select":{"filter":{"uploaded_by_user_id":{"_eq":"X-Hasura-Org-Id"}}}},
 {"role":"noop","buckets":["*"]},
 {"role":"deleter","buckets":["default"],"delete":{}}]}`

// TestCheckAccess: CheckAccess names the deciding rule and why, and agrees with what
// the same principal's requests get.
func TestCheckAccess(t *testing.T) {
	ctx := context.Background()
	svc, _, _ := newService(t, checkRules)
	admin := coffer.AdminPrincipal()
	_, err := svc.CreateBucket(ctx, admin, "pics", coffer.BucketUpdate{})
	must(t, err)
	alices := named(t, svc, user("alice"), "a.txt")
	for _, c := range []struct {
		name    string
		q       service.AccessQuery
		allowed bool
		rule    string
		reason  string // a part of the reason
	}{
		{"owner reads", service.AccessQuery{Role: "user", UserID: "alice", Action: "read", FileID: alices.ID},
			true, "rules[0].read", "the file matches its filter"},
		{"other user reads", service.AccessQuery{Role: "user", UserID: "bob", Action: "read", FileID: alices.ID},
			false, "rules[0].read", `uploaded_by_user_id is "alice", not _eq x-hasura-user-id ("bob")`},
		{"no user id", service.AccessQuery{Role: "user", Action: "delete", FileID: alices.ID, BucketID: "default"},
			false, "rules[0].read", "x-hasura-user-id, which the session does not have"},
		{"delete without read", service.AccessQuery{Role: "deleter", Action: "delete", FileID: alices.ID},
			false, "rules[3]", "to delete a file a role must first be able to read it: rules[3], the first rule for role deleter on bucket default, has no read action"},
		{"delete without read, no file", service.AccessQuery{Role: "deleter", Action: "delete", BucketID: "default"},
			true, "rules[3].delete", "the files its filter matches"},
		{"other user deletes", service.AccessQuery{Role: "user", UserID: "bob", Action: "delete", FileID: alices.ID},
			false, "rules[0].read", "must first be able to read it"},
		{"owner deletes", service.AccessQuery{Role: "user", UserID: "alice", Action: "delete", FileID: alices.ID},
			true, "rules[0].delete", "allows it"},
		{"read, no file", service.AccessQuery{Role: "user", Action: "read", BucketID: "default"},
			true, "rules[0].read", "the files its filter matches"},
		{"no rule for the bucket", service.AccessQuery{Role: "user", UserID: "alice", Action: "read", BucketID: "pics"},
			false, "", "no rule for role user on bucket pics"},
		{"unknown role", service.AccessQuery{Role: "guest", Action: "read", BucketID: "default"},
			false, "", "no rule for role guest on bucket default"},
		{"a rule without the action", service.AccessQuery{Role: "noop", Action: "read", BucketID: "default"},
			false, "rules[2]", "has no read action"},
		{"session claim", service.AccessQuery{Role: "org", Action: "read", FileID: alices.ID,
			Session: map[string]string{"X-Hasura-Org-Id": "alice"}}, true, "rules[1].select", "matches"},
		{"wrong session claim", service.AccessQuery{Role: "org", Action: "read", FileID: alices.ID,
			Session: map[string]string{"x-hasura-org-id": "acme"}}, false, "rules[1].select", `("acme")`},
		{"create", service.AccessQuery{Role: "user", UserID: "bob", Action: "create", BucketID: "default", Name: "b.txt", Size: 5},
			true, "rules[0].upload", "allows it"},
		{"create too large", service.AccessQuery{Role: "user", UserID: "bob", Action: "create", BucketID: "default", Name: "b.txt", Size: 11},
			false, "rules[0].upload", "over rules[0].upload.max_size (10)"},
		{"create failing the check", service.AccessQuery{Role: "user", UserID: "bob", Action: "create", BucketID: "default", Name: "b.exe", Size: 1},
			false, "rules[0].upload", `rules[0].upload.check: name is "b.exe", not _like "%.txt"`},
		{"create without the preset's variable", service.AccessQuery{Role: "user", Action: "insert", BucketID: "default", Name: "b.txt"},
			false, "rules[0].upload", "presets: preset uploaded_by_user_id needs session variable x-hasura-user-id"},
		{"rename failing the check", service.AccessQuery{Role: "user", UserID: "alice", Action: "update", FileID: alices.ID, Name: "a.exe"},
			false, "rules[0].update", "does not pass rules[0].update.check"},
		{"rename", service.AccessQuery{Role: "user", UserID: "alice", Action: "update", FileID: alices.ID, Name: "b.txt"},
			true, "rules[0].update", "allows it"},
		{"admin", service.AccessQuery{Role: "admin", Action: "delete", FileID: alices.ID}, true, "", "bypasses"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := svc.CheckAccess(ctx, admin, c.q)
			must(t, err)
			if got.Allowed != c.allowed || got.Rule != c.rule || !strings.Contains(got.Reason, c.reason) {
				t.Errorf("CheckAccess = %+v, want allowed %v, rule %q, reason with %q", got, c.allowed, c.rule, c.reason)
			}
		})
	}
	// A role that may delete but not read is refused the delete, as CheckAccess says.
	deleter := &coffer.Principal{Role: "deleter", Session: map[string]string{"x-hasura-role": "deleter"}}
	if err := svc.DeleteFile(ctx, deleter, alices.ID); err == nil {
		t.Errorf("role deleter deleted a file it may not read")
	}
	// The answers agree with the requests of the same principals.
	for _, c := range []struct {
		p    *coffer.Principal
		read bool
	}{{user("alice"), true}, {user("bob"), false}, {user(""), false}} {
		ans, err := svc.CheckAccess(ctx, admin, service.AccessQuery{Role: "user", UserID: c.p.UserID, Action: "read", FileID: alices.ID})
		must(t, err)
		_, _, err = svc.GetFile(ctx, c.p, alices.ID)
		if ans.Allowed != c.read || (err == nil) != c.read {
			t.Errorf("user %q: CheckAccess %v, GetFile error %v; want readable %v", c.p.UserID, ans.Allowed, err, c.read)
		}
	}
}

// CheckAccess is the admin's, and refuses bad questions with EINVALID or ENOTFOUND.
func TestCheckAccessRefusals(t *testing.T) {
	ctx := context.Background()
	svc, _, _ := newService(t, checkRules)
	admin := coffer.AdminPrincipal()
	f := named(t, svc, admin, "a.txt")
	_, err := svc.CreateBucket(ctx, admin, "pics", coffer.BucketUpdate{})
	must(t, err)
	for _, c := range []struct {
		name string
		p    *coffer.Principal
		q    service.AccessQuery
		code string
	}{
		{"a user asks", user("alice"), service.AccessQuery{Role: "user", Action: "read", BucketID: "default"}, coffer.EFORBIDDEN},
		{"anonymous", coffer.AnonymousPrincipal("public"), service.AccessQuery{Role: "user", Action: "read", BucketID: "default"}, coffer.EUNAUTHORIZED},
		{"unknown action", admin, service.AccessQuery{Role: "user", Action: "write", BucketID: "default"}, coffer.EINVALID},
		{"no role", admin, service.AccessQuery{Action: "read", BucketID: "default"}, coffer.EINVALID},
		{"session variable not x-hasura", admin, service.AccessQuery{Role: "user", Action: "read", BucketID: "default",
			Session: map[string]string{"org": "x"}}, coffer.EINVALID},
		{"missing bucket", admin, service.AccessQuery{Role: "user", Action: "read", BucketID: "nope"}, coffer.ENOTFOUND},
		{"missing file", admin, service.AccessQuery{Role: "user", Action: "read", FileID: coffer.NewFileID()}, coffer.ENOTFOUND},
		{"file of another bucket", admin, service.AccessQuery{Role: "user", Action: "read", FileID: f.ID, BucketID: "pics"}, coffer.EINVALID},
		{"bad name", admin, service.AccessQuery{Role: "user", Action: "create", BucketID: "default", Name: "../x"}, coffer.EINVALID},
		{"bad metadata", admin, service.AccessQuery{Role: "user", Action: "create", BucketID: "default", Metadata: json.RawMessage(`[1]`)}, coffer.EINVALID},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := svc.CheckAccess(ctx, c.p, c.q)
			wantCode(t, c.name, err, c.code)
		})
	}
}

// With --jwt-admin-role=false a JWT of role admin is an ordinary role: CheckAccess
// evaluates the rules for it instead of answering that admin bypasses them.
func TestCheckAccessAdminRoleOff(t *testing.T) {
	ctx := context.Background()
	cfg := service.DefaultConfig()
	cfg.JWTAdminRole = false
	svc, err := service.New(cfg, openSQLite(t), blob.New(memblob.New()), service.Caches{}, slog.New(slog.DiscardHandler))
	must(t, err)
	must(t, svc.SetRules(ctx, coffer.AdminPrincipal(), []byte(checkRules)))
	got, err := svc.CheckAccess(ctx, coffer.AdminPrincipal(), service.AccessQuery{Role: "admin", Action: "read", BucketID: "default"})
	must(t, err)
	if got.Allowed || !strings.Contains(got.Reason, "no rule for role admin") {
		t.Errorf("role admin with --jwt-admin-role=false: %+v, want refused by the rules", got)
	}
}
