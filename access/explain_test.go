package access

import (
	"strings"
	"testing"
	"time"

	"github.com/coffer/coffer"
)

func TestDecide(t *testing.T) {
	rs, err := Parse([]byte(`
rules:
  - role: user
    buckets: [avatars]
    insert: {presets: {uploaded_by_user_id: X-Hasura-User-Id}}
    select: {filter: {uploaded_by_user_id: {_eq: X-Hasura-User-Id}}}
  - role: user
    buckets: ["docs-*", avatars]
    delete: {}
  - role: viewer
    buckets: ["*"]
    read: {}
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		role, bucket string
		a            Action
		granted      bool
		path         string
	}{
		{"user", "avatars", Read, true, "rules[0].select"},
		{"user", "avatars", Upload, true, "rules[0].insert"},
		{"user", "avatars", Delete, false, "rules[0]"}, // the first matching rule decides
		{"user", "docs-1", Delete, true, "rules[1].delete"},
		{"user", "docs-1", Read, false, "rules[1]"},
		{"user", "other", Read, false, ""},
		{"viewer", "anything", Read, true, "rules[2].read"},
		{"guest", "avatars", Read, false, ""},
	} {
		d := rs.Decide(tt.role, tt.bucket, tt.a)
		if (d.Permission != nil) != tt.granted || d.Path != tt.path || d.Permission != rs.Permission(tt.role, tt.bucket, tt.a) {
			t.Errorf("Decide(%s, %s, %s) = %+v, want granted %v at %q", tt.role, tt.bucket, tt.a, d, tt.granted, tt.path)
		}
	}
}

func TestParseAction(t *testing.T) {
	for s, want := range map[string]Action{"create": Upload, "upload": Upload, "insert": Upload, "read": Read,
		"select": Read, "update": Replace, "replace": Replace, "delete": Delete, "write": "", "": "", "READ": ""} {
		if a, ok := ParseAction(s); a != want || ok != (want != "") {
			t.Errorf("ParseAction(%q) = %q, %v; want %q", s, a, ok, want)
		}
	}
}

// Explain names the first comparison that fails, with both values, and agrees
// with Match.
func TestExplain(t *testing.T) {
	f := &coffer.File{Name: "a.exe", Size: 2000, UploadedByUserID: "bob", IsUploaded: true,
		CreatedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	alice := map[string]string{"x-hasura-user-id": "alice", "x-hasura-max": "x"}
	for _, tt := range []struct {
		filter string
		want   string // "" when it matches
	}{
		{`{uploaded_by_user_id: {_eq: X-Hasura-User-Id}}`, `uploaded_by_user_id is "bob", not _eq x-hasura-user-id ("alice")`},
		{`{uploaded_by_user_id: {_eq: bob}}`, ""},
		{`{_and: [{size: {_lt: 5000}}, {name: {_like: "%.txt"}}]}`, `name is "a.exe", not _like "%.txt"`},
		{`{_or: [{size: {_lt: 10}}, {is_uploaded: {_eq: false}}]}`, `none of _or's conditions holds (size is 2000, not _lt 10; is_uploaded is true, not _eq false)`},
		{`{_not: {size: {_gt: 1}}}`, `the condition under _not holds`},
		{`{uploaded_by_user_id: {_eq: X-Hasura-Org}}`, `uploaded_by_user_id is compared with x-hasura-org, which the session does not have`},
		{`{size: {_lt: X-Hasura-Max}}`, `size is compared with x-hasura-max ("x"), which is not an integer`},
		{`{mime_type: {_in: [a, X-Hasura-User-Id]}}`, `mime_type is "", not _in ["a", x-hasura-user-id ("alice")]`},
		{`{uploaded_by_user_id: {_is_null: true}}`, `uploaded_by_user_id is "bob", not _is_null true`},
		{`{created_at: {_gt: "2027-01-01T00:00:00Z"}}`, `created_at is 2026-01-02T03:04:05Z, not _gt 2027-01-01T00:00:00Z`},
	} {
		rs, err := Parse([]byte(`[{role: r, buckets: b, read: {filter: ` + tt.filter + `}}]`))
		if err != nil {
			t.Fatalf("%s: %v", tt.filter, err)
		}
		e := rs.Permission("r", "b", Read).Filter
		got := Explain(e, f, alice)
		if got != tt.want || (got == "") != e.Match(f, alice) {
			t.Errorf("Explain(%s) = %q, want %q", tt.filter, got, tt.want)
		}
		if strings.Contains(got, "%!") {
			t.Errorf("formatting error in %q", got)
		}
	}
}
