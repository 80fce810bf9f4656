package access

import (
	"strings"
	"testing"

	"github.com/coffer/coffer"
)

const exampleRules = `
rules:
  - role: user
    buckets: [profile-pics]
    upload:
      presets: {uploaded_by_user_id: X-Hasura-User-Id}
      max_size: 5000000
    read:
      filter: {uploaded_by_user_id: {_eq: X-Hasura-User-Id}}
    delete:
      filter: {uploaded_by_user_id: {_eq: X-Hasura-User-Id}}
  - role: user
    buckets: ["docs-*"]
    read: {}
  - role: editor
    buckets: "*"
    read:
      filter:
        _or:
          - {mime_type: {_like: "image/%"}}
          - {_and: [{size: {_lt: 1000}}, {name: {_ilike: "%.TXT"}}]}
          - {_not: {is_uploaded: {_eq: true}}}
`

func TestExampleRules(t *testing.T) {
	rs, err := Parse([]byte(exampleRules))
	if err != nil {
		t.Fatal(err)
	}
	alice := map[string]string{"x-hasura-user-id": "alice"}
	own := &coffer.File{UploadedByUserID: "alice", IsUploaded: true}
	other := &coffer.File{UploadedByUserID: "bob", IsUploaded: true}
	read := rs.Permission("user", "profile-pics", Read)
	if read == nil || !read.Filter.Match(own, alice) || read.Filter.Match(other, alice) {
		t.Fatal("owner read rule wrong")
	}
	if read.Filter.Match(own, map[string]string{}) {
		t.Fatal("a missing session variable must not match")
	}
	up := rs.Permission("user", "profile-pics", Upload)
	if up == nil || up.MaxSize != 5000000 || up.Presets[coffer.FieldUploadedBy].Var != "x-hasura-user-id" {
		t.Fatalf("upload permission %+v", up)
	}
	if rs.Permission("user", "profile-pics", Replace) != nil {
		t.Fatal("unlisted action granted")
	}
	if p := rs.Permission("user", "docs-2024", Read); p == nil || !p.Filter.Match(other, alice) {
		t.Fatal("pattern bucket rule")
	}
	if rs.Permission("user", "other", Read) != nil || rs.Permission("guest", "profile-pics", Read) != nil {
		t.Fatal("unmatched role or bucket granted")
	}
	ed := rs.Permission("editor", "anything", Read).Filter
	for _, c := range []struct {
		f    coffer.File
		want bool
	}{
		{coffer.File{MimeType: "image/png", IsUploaded: true}, true},
		{coffer.File{MimeType: "text/plain", Size: 10, Name: "a.txt", IsUploaded: true}, true},
		{coffer.File{MimeType: "text/plain", Size: 10000, Name: "a.txt", IsUploaded: true}, false},
		{coffer.File{MimeType: "text/plain", IsUploaded: false}, true},
	} {
		if got := ed.Match(&c.f, nil); got != c.want {
			t.Errorf("editor filter on %+v = %v", c.f, got)
		}
	}
}

func TestParseErrorsNamePath(t *testing.T) {
	cases := map[string]string{
		`rules: [{role: u, buckets: [b], read: {filter: {size: {_gt: "x"}}}}]`:      "rules[0].read.filter.size._gt",
		`rules: [{role: u, buckets: [b], read: {filter: {nope: {_eq: 1}}}}]`:        "rules[0].read.filter.nope",
		`rules: [{role: u, buckets: [b], read: {filter: {name: {_regex: "x"}}}}]`:   "rules[0].read.filter.name._regex",
		`rules: [{role: u, buckets: [b]}, {role: "", buckets: [b]}]`:                "rules[1].role",
		`rules: [{role: u, buckets: []}]`:                                           "rules[0].buckets",
		`rules: [{role: u, buckets: [b], upload: {presets: {name: x}}}]`:            "rules[0].upload.presets.name",
		`rules: [{role: u, buckets: [b], read: {check: {}}}]`:                       "rules[0].read.check",
		`rules: [{role: u, buckets: [b], fly: {}}]`:                                 "rules[0].fly",
		`rules: [{role: u, buckets: [b], read: {filter: {_or: {}}}}]`:               "rules[0].read.filter._or",
		`rules: [{role: u, buckets: [b], read: {filter: {size: {_like: "1%"}}}}]`:   "rules[0].read.filter.size._like",
		`rules: [{role: u, buckets: [b], upload: {max_size: -1}}]`:                  "rules[0].upload.max_size",
		`rules: [{role: u, buckets: ["[x"]}]`:                                       "rules[0].buckets[0]",
		`rules: [{role: u, buckets: [b], read: {filter: {_and: [{}, {size: 1}]}}}]`: "rules[0].read.filter._and[1].size",
		`{"rules": 3}`: "rules",
		`x: 1`:         "rules.x",
	}
	for doc, want := range cases {
		_, err := Parse([]byte(doc))
		if coffer.ErrorCode(err) != coffer.EINVALID || !strings.Contains(coffer.ErrorMessage(err), want+":") {
			t.Errorf("Parse(%s) = %v; want EINVALID naming %s", doc, err, want)
		}
	}
}

// TestParseRefusesEmptyDocuments (D5): a document that lost its rules (null, {}, an
// empty body, rules: null) is refused naming "rules" instead of meaning "no rules";
// clearing them takes an explicit empty list.
func TestParseRefusesEmptyDocuments(t *testing.T) {
	for _, doc := range []string{"null", "{}", "", " \n", "~", `{"rules": null}`, "rules:", "# nothing\n"} {
		_, err := Parse([]byte(doc))
		if coffer.ErrorCode(err) != coffer.EINVALID || !strings.HasPrefix(coffer.ErrorMessage(err), "rules: missing") {
			t.Errorf("Parse(%q) = %v; want EINVALID \"rules: missing...\"", doc, err)
		}
	}
	for _, doc := range []string{`{"rules": []}`, "rules: []", "[]"} {
		rs, err := Parse([]byte(doc))
		if err != nil || string(rs.Document()) != `{"rules":[]}` {
			t.Errorf("Parse(%q) = %v, %v; want no rules", doc, rs, err)
		}
	}
}

// A document followed by anything but white space or comments is refused: the first
// of two documents used to replace the rules.
func TestParseRefusesTrailingData(t *testing.T) {
	for _, doc := range []string{`{"rules": []}{"rules": []}`, `{"rules": []}]`, `{"rules": []}}`, "rules: []\n---\nrules: []\n"} {
		if _, err := Parse([]byte(doc)); coffer.ErrorCode(err) != coffer.EINVALID {
			t.Errorf("Parse(%q) = %v; want EINVALID", doc, err)
		}
	}
	if _, err := Parse([]byte("---\nrules: []\n# end\n")); err != nil {
		t.Errorf("one document with a start marker and a comment: %v", err)
	}
}

// FuzzParse: Parse never panics, fails only with EINVALID, and what it accepts
// round-trips: its Document parses to the same Document.
func FuzzParse(f *testing.F) {
	for _, doc := range []string{exampleRules, "null", "{}", `{"rules":[]}`, "[]", `{"rules":3}`, "rules:",
		`rules: [{role: u, buckets: [b], read: {filter: {_and: [{}, {size: 1}]}}}]`} {
		f.Add([]byte(doc))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		rs, err := Parse(doc)
		if err != nil {
			if coffer.ErrorCode(err) != coffer.EINVALID {
				t.Fatalf("Parse(%q): %v, want EINVALID", doc, err)
			}
			return
		}
		again, err := Parse(rs.Document())
		if err != nil || string(again.Document()) != string(rs.Document()) {
			t.Fatalf("Parse(%q): document %s does not round-trip: %v", doc, rs.Document(), err)
		}
	})
}

func TestJSONRules(t *testing.T) {
	rs, err := Parse([]byte(`{"rules":[{"role":"user","buckets":["b"],"select":{"filter":{"uploaded_by_user_id":{"_eq":"x-hasura-user-id"}}},"insert":{"presets":{"uploaded_by_user_id":"X-Hasura-User-Id"}}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if rs.Permission("user", "b", Read) == nil || rs.Permission("user", "b", Upload) == nil {
		t.Fatal("select/insert aliases not understood")
	}
	again, err := Parse(rs.Document())
	if err != nil || string(again.Document()) != string(rs.Document()) {
		t.Fatalf("document does not round-trip: %v", err)
	}
}

func BenchmarkRuleCheck(b *testing.B) {
	rs, _ := Parse([]byte(exampleRules))
	vars := map[string]string{"x-hasura-user-id": "alice", "x-hasura-role": "user"}
	f := &coffer.File{UploadedByUserID: "alice", MimeType: "text/plain", Name: "a.TXT", Size: 10, IsUploaded: true}
	b.Run("owner", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			p := rs.Permission("user", "profile-pics", Read)
			if p == nil || !p.Filter.Match(f, vars) {
				b.Fatal("denied")
			}
		}
	})
	b.Run("editor-or", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			p := rs.Permission("editor", "x", Read)
			if p == nil || !p.Filter.Match(f, vars) {
				b.Fatal("denied")
			}
		}
	})
}

// TestWritable: a bucket is writable when the rule deciding for some role on it
// grants upload or replace; an earlier rule of the same role that does not
// shadows a later one that does.
func TestWritable(t *testing.T) {
	rs, err := Parse([]byte(`
rules:
  - role: user
    buckets: [site]
    read: {}
  - role: user
    buckets: ["*"]
    upload: {}
  - role: editor
    buckets: ["pub-*"]
    replace: {filter: {name: {_like: "%.txt"}}}
  - role: public
    buckets: [site, docs]
    read: {}
`))
	if err != nil {
		t.Fatal(err)
	}
	for bucket, want := range map[string]bool{"site": false, "docs": true, "pub-a": true, "other": true} {
		for range 2 { // the second answer is the memo's
			if got := rs.Writable(bucket); got != want {
				t.Errorf("Writable(%q) = %v, want %v", bucket, got, want)
			}
		}
	}
	if Empty().Writable("site") {
		t.Error("no rules: writable")
	}
	if n := testing.AllocsPerRun(100, func() { rs.Writable("pub-a") }); n != 0 {
		t.Errorf("a remembered answer allocates %v times", n)
	}
}
