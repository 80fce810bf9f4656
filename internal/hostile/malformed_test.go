package hostile

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// jsonRoute is a route that takes a JSON body, with a valid body to break.
type jsonRoute struct {
	method, path string // path may hold {id}: a file of alice's
	user         string // "" = admin
	valid        string
	yaml         bool // the body may be YAML too (a superset of JSON)
}

var jsonRoutes = []jsonRoute{
	{"POST", "/v1/buckets", "", `{"id":"newbucket","maxUploadFileSize":1000,"allowedMimeTypes":["image/*"],"public":false}`, false},
	{"PATCH", "/v1/buckets/priv", "", `{"maxUploadFileSize":1000,"cacheControl":"max-age=60","downloadExpiration":30}`, false},
	{"POST", "/v1/webhooks", "", `{"url":"http://127.0.0.1:9/hook","bucketId":"priv","events":["file.created"],"secret":"s3cret-s3cret-s3cret"}`, false},
	{"PATCH", "/v1/files/{id}/metadata", "alice", `{"name":"renamed.txt","metadata":{"k":"v"}}`, false},
	{"PUT", "/v1/rules", "", `{"rules":[{"role":"user","buckets":["default","priv","inline","signed"],"read":{"filter":{"uploaded_by_user_id":{"_eq":"X-Hasura-User-Id"}}}}]}`, true},
}

// malformedJSON returns documents that are not valid JSON, or are JSON of the
// wrong shape for valid (whose top level is an object): truncations, each value
// replaced by wrong types, deep nesting, huge numbers, invalid UTF-8, a BOM and
// syntax errors. With yaml, documents that are valid YAML are left out.
func malformedJSON(valid string, yaml bool) []string {
	var out []string
	for i := 1; i < len(valid); i += max(1, len(valid)/40) {
		out = append(out, valid[:i])
	}
	for _, v := range []string{`1`, `"s"`, `true`, `[]`, `{"x":1}`, `-1e999`, `1e400`, `99999999999999999999999`, `1.5`, `"\ud800"`} {
		out = append(out, wrongValues(valid, v)...)
	}
	deep := strings.Repeat("[", 100000) + strings.Repeat("]", 100000)
	out = append(out, deep, strings.Repeat(`{"a":`, 20000)+"1"+strings.Repeat("}", 20000),
		valid+valid, valid+"]", valid+"}", "["+valid+"]", `"`+valid, "\x00"+valid,
		strings.Replace(valid, `"`, "\xff\xfe\"", 1), `{"a":"`+strings.Repeat("x", 2<<20)+`"}`, `[`+valid, `{`, `}`, `]`,
		`{"id":}`, `{:}`, `{,}`, `{"a" 1}`, `{"a":1,,"b":2}`, `{"a":tru}`, `{"a":nul}`, `{"a":NaN}`, `{"a":Infinity}`,
		`{"a":0x10}`, `{"a":01}`, `{"a":.5}`, `{"a":"\x01"}`, `{"a":"\q"}`, `{"a":"\u12"}`)
	if !yaml { // a BOM, a trailing comma, quotes and comments are YAML
		out = append(out, "\xef\xbb\xbf"+valid, valid[:len(valid)-1]+",}", "", " ", "null", "[]", `"str"`, "123", "true", `{'a':1}`, `{a:1}`, valid+" // comment",
			"/* c */"+valid, `{"a":"b"`+"\n", strings.Replace(valid, ":", "=", 1))
	}
	return out
}

// wrongValues returns valid with each of its top-level values replaced by v, where
// v is of another JSON type.
func wrongValues(valid, v string) []string {
	var out []string
	replace := func(start, end int) {
		if kind(valid[start]) != kind(v[0]) {
			out = append(out, valid[:start]+v+valid[end:])
		}
	}
	depth, start := 0, -1
	for i := 0; i < len(valid); i++ {
		switch c := valid[i]; {
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			if depth--; depth == 0 && start >= 0 {
				replace(start, i)
			}
		case c == ':' && depth == 1:
			start = i + 1
		case c == ',' && depth == 1 && start >= 0:
			replace(start, i)
			start = -1
		case c == '"':
			for i++; i < len(valid) && valid[i] != '"'; i++ {
				if valid[i] == '\\' {
					i++
				}
			}
		}
	}
	return out
}

// kind returns the JSON type a value starting with c has.
func kind(c byte) byte {
	switch {
	case c == '-' || c >= '0' && c <= '9':
		return '0'
	case c == 'f':
		return 't'
	}
	return c
}

// TestMalformedJSON sends malformed documents to every route that takes JSON: all
// are refused with a 4xx, none is a 5xx, and afterwards buckets, rules, webhooks,
// the file's metadata and what is stored are as they were.
func TestMalformedJSON(t *testing.T) {
	s := newServer(t)
	tl := s.tally("json")
	id := s.mustUpload("alice", "priv", "target.txt", []byte("target"))
	before, snap := s.stored(), s.snapshot(id)
	for _, rt := range jsonRoutes {
		path := strings.ReplaceAll(rt.path, "{id}", id)
		hdr := s.admin()
		if rt.user != "" {
			hdr = as(rt.user)
		}
		for i, doc := range malformedJSON(rt.valid, rt.yaml) {
			a := s.do(rt.method, path, strings.NewReader(doc), append(hdr, "Content-Type", "application/json")...)
			wrong := ""
			if a.status < 400 {
				wrong = "accepted"
			}
			tl.probe(fmt.Sprintf("%s %s doc %d %.300q", rt.method, rt.path, i, doc), a, wrong)
		}
	}
	tl.probe("after the malformed documents, what is stored", answer{status: http.StatusOK}, s.unchanged(before))
	if now := s.snapshot(id); now != snap {
		tl.probe("after the malformed documents", answer{status: http.StatusOK}, fmt.Sprintf("state changed:\n%s\nwas\n%s", now, snap))
	}
}

// TestEmptyRules: PUT /v1/rules with null, {}, an empty body or a document with
// no rules key is refused, and the rules stay as they were (D5).
func TestEmptyRules(t *testing.T) {
	s := newServer(t)
	tl := s.tally("rules-empty")
	rules := s.mustStatus(http.StatusOK, "GET", "/v1/rules", nil, s.admin()...).body
	for _, doc := range []string{"null", "{}", "", "  \n", "~", "---", `{"rulez":[]}`, `{"rules":null}`} {
		a := s.do("PUT", "/v1/rules", strings.NewReader(doc), append(s.admin(), "Content-Type", "application/json")...)
		wrong := ""
		if a.status < 400 {
			wrong = "accepted"
		}
		tl.probe(fmt.Sprintf("PUT /v1/rules %q", doc), a, wrong)
		if now := s.do("GET", "/v1/rules", nil, s.admin()...).body; string(now) != string(rules) {
			tl.probe(fmt.Sprintf("rules after %q", doc), answer{status: http.StatusOK}, "the rules changed to "+string(now))
			s.mustStatus(http.StatusOK, "PUT", "/v1/rules", strings.NewReader(string(rules)), s.admin()...)
		}
	}
}

// snapshot reads what the JSON routes change, as text.
func (s *server) snapshot(id string) string {
	var b strings.Builder
	for _, path := range []string{"/v1/buckets", "/v1/rules", "/v1/webhooks", "/v1/files/" + id + "/metadata"} {
		a := s.mustStatus(http.StatusOK, "GET", path, nil, s.admin()...)
		fmt.Fprintf(&b, "%s: %s\n", path, a.body)
	}
	return b.String()
}

// Multipart pieces: a file part, a field, the closing boundary, a valid upload.
var (
	mpEnd   = "--" + boundary + "--\r\n"
	mpCT    = "multipart/form-data; boundary=" + boundary
	mpValid = mpField("bucket-id", "priv") + mpFile("file[]") + mpEnd
)

func mpFile(field string) string {
	return "--" + boundary + "\r\nContent-Disposition: form-data; name=\"" + field + "\"; filename=\"m.bin\"\r\n\r\ndata\r\n"
}

func mpField(name, v string) string {
	return "--" + boundary + "\r\nContent-Disposition: form-data; name=\"" + name + "\"\r\n\r\n" + v + "\r\n"
}

// malformedMultipart returns bodies (Content-Type, body) that neither upload nor
// replace anything: no or bad boundaries, unterminated bodies, broken, huge or too
// many part headers, no file part, and broken metadata.
func malformedMultipart() [][2]string {
	ct, valid, end := mpCT, mpValid, mpEnd
	return [][2]string{
		{"multipart/form-data", valid}, {"multipart/form-data; boundary=", valid}, {"multipart/form-data; boundary=\"\"", valid},
		{"multipart/form-data; boundary=" + strings.Repeat("b", 100), valid}, {"multipart/form-data; boundary=a b", valid},
		{"text/plain", valid}, {"application/json", `{"file":"x"}`}, {"", valid},
		{"multipart/form-data; boundary=other", valid}, {ct + "; boundary=second", valid},
		{ct, ""}, {ct, "garbage"}, {ct, end}, {ct, "--" + boundary}, {ct, strings.TrimSuffix(valid, end)},
		{ct, valid[:len(valid)/2]}, {ct, mpField("bucket-id", "priv") + end}, {ct, mpField("metadata[]", `{"name":"x"}`) + end},
		{ct, mpField("bucket-id", "priv") + mpField("metadata[]", `{"name":`) + mpFile("file[]") + end},
		{ct, mpField("bucket-id", "priv") + mpField("metadata[]", `[1]`) + mpFile("file[]") + end},
		{ct, mpField("bucket-id", "priv") + mpField("metadata[]", strings.Repeat("[", 100000)) + mpFile("file[]") + end},
		{ct, mpFile("file") + mpFile("file") + end},
		{ct, "--" + boundary + "\r\nContent-Disposition form-data\r\n\r\nx\r\n" + end},
		{ct, "--" + boundary + "\r\n\r\nno headers\r\n" + end},
		{ct, "--" + boundary + "\r\nContent-Disposition: form-data; name=\"file[]\"; filename=\"m.bin\"\r\nX-Big: " + strings.Repeat("h", 1<<20) + "\r\n\r\nx\r\n" + end},
		{ct, "--" + boundary + "\r\n" + strings.Repeat("X-H: v\r\n", 20000) + "Content-Disposition: form-data; name=\"file[]\"; filename=\"m\"\r\n\r\nx\r\n" + end},
		{ct, mpField("bucket-id", "priv") + mpField("junk", strings.Repeat("j", 2<<20)) + mpFile("file[]") + end},
	}
}

// malformedUploads are bodies that upload nothing although a replace may take
// them (it has no bucket-id, and reads one file): bucket-id twice, unknown or bad,
// more metadata than files, both file forms, many unknown fields.
func malformedUploads() [][2]string {
	ct, end := mpCT, mpEnd
	return [][2]string{
		{ct, mpField("bucket-id", "priv") + mpField("metadata[]", `{"id":"not-a-uuid"}`) + mpFile("file[]") + end},
		{ct, mpField("bucket-id", "priv") + mpField("bucket-id", "priv") + mpFile("file[]") + end},
		{ct, mpField("bucket-id", "no-such-bucket") + mpFile("file[]") + end}, {ct, mpField("bucket-id", "../priv") + mpFile("file[]") + end},
		{ct, mpField("bucket-id", "priv") + mpFile("file") + mpFile("file[]") + end},
		{ct, mpField("bucket-id", "priv") + mpField("metadata[]", `{}`) + mpField("metadata[]", `{}`) + mpFile("file[]") + end},
		{ct, mpField("bucket-id", "priv") + strings.Repeat(mpField("junk", "x"), 20000) + end},
		{ct, mpField("bucket-id", strings.Repeat("p", 1<<20)) + mpFile("file[]") + end},
	}
}

// lenientMultipart are bodies a server may take or refuse: another multipart type,
// a closing boundary without its "--", LF line ends, parts in unusual orders.
func lenientMultipart() [][2]string {
	lf := strings.ReplaceAll(mpValid, "\r\n", "\n")
	return [][2]string{
		{"multipart/mixed; boundary=" + boundary, mpValid}, {mpCT, strings.TrimSuffix(mpValid, mpEnd) + "--" + boundary},
		{mpCT, lf}, {mpCT, mpFile("file[]") + mpField("bucket-id", "priv") + mpEnd},
		{mpCT, mpFile("file[]") + mpField("metadata[]", `{"name":"after.bin"}`) + mpEnd},
		{mpCT, "preamble\r\n" + mpValid}, {mpCT, mpValid + "epilogue"}, {`multipart/form-data; boundary="` + boundary + `"`, mpValid},
	}
}

// TestMalformedMultipart sends malformed multipart bodies to the upload and the
// replace routes: every one is refused with a 4xx, none is a 5xx, and nothing is
// stored or replaced; then bodies a server may take either way: no 5xx.
func TestMalformedMultipart(t *testing.T) {
	s := newServer(t)
	tl := s.tally("multipart")
	id := s.mustUpload("alice", "priv", "target.txt", []byte("target"))
	before, snap := s.stored(), s.snapshot(id)
	send := func(method, path string, bodies [][2]string, mustFail bool) {
		for i, m := range bodies {
			a := s.do(method, path, strings.NewReader(m[1]), append(as("alice"), "Content-Type", m[0])...)
			wrong := ""
			if mustFail && a.status < 400 {
				wrong = "accepted"
			}
			tl.probe(fmt.Sprintf("%s %s body %d (%.60q, %.200q)", method, path, i, m[0], m[1]), a, wrong)
		}
	}
	send("POST", "/v1/files", append(malformedMultipart(), malformedUploads()...), true)
	send("PUT", "/v1/files/"+id, malformedMultipart(), true)
	tl.probe("after the malformed bodies, what is stored", answer{status: http.StatusOK}, s.unchanged(before))
	if now := s.snapshot(id); now != snap {
		tl.probe("after the malformed bodies", answer{status: http.StatusOK}, fmt.Sprintf("state changed:\n%s\nwas\n%s", now, snap))
	}
	send("POST", "/v1/files", lenientMultipart(), false)
	send("PUT", "/v1/files/"+id, lenientMultipart(), false)
}
