package rpcapi_test

import (
	"net/http"
	"strings"
	"testing"

	"connectrpc.com/connect"

	adminv1 "github.com/coffer/coffer/proto/gen/coffer/admin/v1"
)

// TestCheckAccess: RuleService.CheckAccess through the generated client and in
// Connect JSON, as the console calls it: the deciding rule's path and the reason;
// bad questions are INVALID_ARGUMENT with the field named, missing things NOT_FOUND.
func TestCheckAccess(t *testing.T) {
	e := newEnv(t)
	c := e.docsWithRules(t)
	mine := e.upload(asUser(t, "alice"), "docs", "mine.txt", "x")
	for _, tc := range []struct {
		name    string
		q       *adminv1.CheckAccessRequest
		allowed bool
		rule    string
		reason  string
	}{
		{"owner", &adminv1.CheckAccessRequest{Role: "user", UserId: "alice", Action: "read", FileId: mine}, true, "rules[0].read", "matches its filter"},
		{"another user", &adminv1.CheckAccessRequest{Role: "user", UserId: "bob", Action: "delete", FileId: mine}, false, "rules[0].read",
			`to delete a file a role must first be able to read it: the file does not match rules[0].read.filter: uploaded_by_user_id is "alice", not _eq x-hasura-user-id ("bob")`},
		{"no rule", &adminv1.CheckAccessRequest{Role: "user", UserId: "bob", Action: "read", BucketId: "default"}, false, "",
			"no rule for role user on bucket default"},
		{"create", &adminv1.CheckAccessRequest{Role: "user", UserId: "bob", Action: "create", BucketId: "docs", Name: "n.txt", Size: 3}, true, "rules[0].upload", "allows it"},
	} {
		res, err := c.rules.CheckAccess(ctx(), req(tc.q))
		check(t, tc.name, err)
		if m := res.Msg; m.GetAllowed() != tc.allowed || m.GetRule() != tc.rule || !strings.Contains(m.GetReason(), tc.reason) {
			t.Errorf("%s: %v, want allowed %v, rule %q, reason with %q", tc.name, m, tc.allowed, tc.rule, tc.reason)
		}
	}
	code, out, _ := e.postJSON(asAdmin(), "RuleService/CheckAccess",
		`{"role":"user","session":{"X-Hasura-User-Id":"bob"},"action":"read","fileId":"`+mine+`"}`)
	if code != http.StatusOK || out["allowed"] != nil || out["rule"] != "rules[0].read" || !strings.Contains(out["reason"].(string), `("bob")`) {
		t.Errorf("CheckAccess in JSON: %d %v", code, out)
	}
	for _, tc := range []struct {
		name  string
		q     *adminv1.CheckAccessRequest
		code  connect.Code
		field string
	}{
		{"unknown action", &adminv1.CheckAccessRequest{Role: "user", Action: "write", BucketId: "docs"}, connect.CodeInvalidArgument, "action"},
		{"no role", &adminv1.CheckAccessRequest{Action: "read", BucketId: "docs"}, connect.CodeInvalidArgument, "role"},
		{"session name", &adminv1.CheckAccessRequest{Role: "user", Action: "read", BucketId: "docs", Session: map[string]string{"org": "x"}},
			connect.CodeInvalidArgument, "session"},
		{"bad metadata", &adminv1.CheckAccessRequest{Role: "user", Action: "create", BucketId: "docs", MetadataJson: "[1]"}, connect.CodeInvalidArgument, ""},
		{"missing bucket", &adminv1.CheckAccessRequest{Role: "user", Action: "read", BucketId: "nope"}, connect.CodeNotFound, ""},
		{"missing file", &adminv1.CheckAccessRequest{Role: "user", Action: "read", FileId: "nope"}, connect.CodeNotFound, ""},
	} {
		_, err := c.rules.CheckAccess(ctx(), req(tc.q))
		wantCode(t, tc.name, err, tc.code)
		if tc.field != "" {
			wantField(t, tc.name, err, tc.field)
		}
	}
}
