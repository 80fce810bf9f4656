package hasura_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coffer/coffer/api/hasura"
	"github.com/golang-jwt/jwt/v5"
)

const (
	jwtKey    = "matrix-test-hs256-key-of-at-least-32-bytes"
	jwtConfig = `{"type":"HS256","key":"` + jwtKey + `"}`
	ownerRule = `{uploaded_by_user_id: {_eq: X-Hasura-User-Id}}`
)

var matrixRules = `
rules:
  - role: user
    buckets: [priv, pub]
    upload: {presets: {uploaded_by_user_id: X-Hasura-User-Id}}
    read: {filter: ` + ownerRule + `}
    replace: {filter: ` + ownerRule + `}
    delete: {filter: ` + ownerRule + `}
`

// token returns a signed HS256 token for role and user.
func token(t testing.TB, role, user string, allowed ...string) string {
	if allowed == nil {
		allowed = []string{role}
	}
	claims := jwt.MapClaims{
		"sub": user, "exp": time.Now().Add(time.Hour).Unix(), "iat": time.Now().Unix(),
		"https://hasura.io/jwt/claims": map[string]any{
			"x-hasura-default-role": role, "x-hasura-allowed-roles": allowed, "x-hasura-user-id": user,
		},
	}
	s, err := jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString([]byte(jwtKey))
	if err != nil {
		panic(err)
	}
	return s
}

// who is a caller in the matrix: the headers it sends.
type who struct {
	name string
	hdr  []string
}

func matrixCallers(t *testing.T) []who {
	return []who{
		{"admin", []string{"X-Hasura-Admin-Secret", adminSecret}},
		{"owner", []string{"Authorization", "Bearer " + token(t, "user", "alice")}},
		{"other-user", []string{"Authorization", "Bearer " + token(t, "user", "bob")}},
		{"other-role", []string{"Authorization", "Bearer " + token(t, "viewer", "alice")}},
		{"anonymous", nil},
	}
}

// Expected statuses per route. For list: 1 = 200 listing the file, 2 = 200 without it.
type expect struct{ upload, get, head, meta, patch, put, presign, list, del int }

var (
	all        = expect{201, 200, 200, 200, 200, 200, 200, 1, 204}
	hiddenPriv = expect{201, 404, 404, 404, 404, 404, 404, 2, 404}
	readOnly   = expect{403, 200, 200, 200, 403, 403, 200, 1, 403}
	userRead   = expect{201, 200, 200, 200, 404, 404, 200, 1, 404} // a replace/delete filter that misses: as a missing file
)

var matrix = map[string]expect{
	"admin/priv": all, "admin/pub": all, "owner/priv": all, "owner/pub": all,
	"other-user/priv": hiddenPriv, "other-user/pub": userRead,
	"other-role/priv": {403, 404, 404, 404, 404, 404, 404, 403, 404}, "other-role/pub": readOnly,
	"anonymous/priv": {403, 404, 404, 404, 404, 404, 404, 403, 404},
	"anonymous/pub":  {403, 200, 200, 200, 403, 403, 200, 1, 403},
}

// TestAccessMatrix runs every file route for every kind of caller on a public and a
// private bucket, against a file alice uploaded, and checks each decision.
func TestAccessMatrix(t *testing.T) {
	e := newEnv(t, envOptions{jwtSecret: jwtConfig, rules: matrixRules})
	mustStatus(t, e.do("POST", "/v1/buckets", strings.NewReader(`{"id":"priv"}`), true), 201, nil)
	mustStatus(t, e.do("POST", "/v1/buckets", strings.NewReader(`{"id":"pub","public":true}`), true), 201, nil)
	alice := []string{"Authorization", "Bearer " + token(t, "user", "alice")}
	checked := 0
	for _, c := range matrixCallers(t) {
		for _, bucket := range []string{"priv", "pub"} {
			want, ok := matrix[c.name+"/"+bucket]
			if !ok {
				t.Fatalf("no expectation for %s/%s", c.name, bucket)
			}
			t.Run(c.name+"/"+bucket, func(t *testing.T) {
				f := e.uploadAs(t, alice, bucket, "target.txt")
				if f.UploadedByUserID != "alice" {
					t.Fatalf("preset not applied: %+v", f)
				}
				checked += e.runMatrixRow(t, c, bucket, f.ID, want)
			})
		}
	}
	if checked != 10*9 {
		t.Fatalf("checked %d decisions, want 90", checked)
	}
}

func (e *env) uploadAs(t *testing.T, hdr []string, bucket, name string) hasura.FileMetadata {
	t.Helper()
	body, ctype := multipartBody(part{field: "bucket-id", body: []byte(bucket)},
		part{field: "file[]", filename: name, ctype: "text/plain", body: []byte("hello")},
		part{field: "metadata[]", body: []byte(`{"name":"` + name + `"}`)})
	var out uploadResp
	mustStatus(t, e.doAs("POST", "/v1/files", body, hdr, "Content-Type", ctype), 201, &out)
	return out.ProcessedFiles[0]
}

func (e *env) doAs(method, path string, body interface{ Read([]byte) (int, error) }, who []string, hdr ...string) *http.Response {
	req, _ := http.NewRequest(method, e.srv.URL+path, body)
	for _, h := range [][]string{who, hdr} {
		for i := 0; i+1 < len(h); i += 2 {
			req.Header.Set(h[i], h[i+1])
		}
	}
	resp, err := e.srv.Client().Do(req)
	if err != nil {
		panic(err)
	}
	return resp
}

func (e *env) runMatrixRow(t *testing.T, c who, bucket, id string, want expect) int {
	check := func(route string, resp *http.Response, status int) {
		t.Helper()
		defer resp.Body.Close()
		if resp.StatusCode != status {
			t.Errorf("%s %s on %s: status %d, want %d", c.name, route, bucket, resp.StatusCode, status)
		}
	}
	body, ctype := multipartBody(part{field: "bucket-id", body: []byte(bucket)}, part{field: "file[]", filename: "mine.txt", body: []byte("x")})
	check("upload", e.doAs("POST", "/v1/files", body, c.hdr, "Content-Type", ctype), want.upload)
	check("get", e.doAs("GET", "/v1/files/"+id, nil, c.hdr), want.get)
	check("head", e.doAs("HEAD", "/v1/files/"+id, nil, c.hdr), want.head)
	check("metadata", e.doAs("GET", "/v1/files/"+id+"/metadata", nil, c.hdr), want.meta)
	check("patch", e.doAs("PATCH", "/v1/files/"+id+"/metadata", strings.NewReader(`{"metadata":{"v":1}}`), c.hdr), want.patch)
	body, ctype = multipartBody(part{field: "file", filename: "x", body: []byte("replaced")})
	check("replace", e.doAs("PUT", "/v1/files/"+id, body, c.hdr, "Content-Type", ctype), want.put)
	check("presign", e.doAs("GET", "/v1/files/"+id+"/presignedurl", nil, c.hdr), want.presign)
	e.checkList(t, c, bucket, id, want.list)
	check("delete", e.doAs("DELETE", "/v1/files/"+id, nil, c.hdr), want.del)
	return 9
}

func (e *env) checkList(t *testing.T, c who, bucket, id string, want int) {
	t.Helper()
	resp := e.doAs("GET", "/v1/buckets/"+bucket+"/files?limit=1000", nil, c.hdr)
	defer resp.Body.Close()
	if want > 2 {
		if resp.StatusCode != want {
			t.Errorf("%s list on %s: status %d, want %d", c.name, bucket, resp.StatusCode, want)
		}
		return
	}
	var out struct{ Files []hasura.FileMetadata }
	json.NewDecoder(resp.Body).Decode(&out)
	found := false
	for _, f := range out.Files {
		found = found || f.ID == id
		if c.name == "other-user" && bucket == "priv" && f.UploadedByUserID != "bob" {
			t.Errorf("list leaked %s's file %s to bob", f.UploadedByUserID, f.Name)
		}
	}
	if resp.StatusCode != 200 || found != (want == 1) {
		t.Errorf("%s list on %s: status %d, file listed %v, want listed %v", c.name, bucket, resp.StatusCode, found, want == 1)
	}
}
