package hasura_test

// Behaviours of hasura-storage that Nhost clients can tell apart, one test each
// (issue 14). Each test names the behaviour it pins.

import (
	"bytes"
	"crypto/md5"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coffer/coffer/api/hasura"
	"github.com/coffer/coffer/auth"
)

// Concurrent replaces of one file without a precondition all succeed; the last to
// commit wins and the stored file is one of the uploads, whole.
func TestCompatConcurrentReplaces(t *testing.T) {
	e := newEnv(t)
	f := e.uploadOne("default", "race.bin", []byte("first"))
	rounds := 20
	if testing.Short() {
		rounds = 5
	}
	for round := range rounds {
		var wg sync.WaitGroup
		sums := map[[16]byte]bool{}
		errs := make(chan string, 3)
		for i := range 3 {
			content := bytes.Repeat([]byte(fmt.Sprintf("r%d-w%d|", round, i)), 4096+i*100)
			sums[md5.Sum(content)] = true
			wg.Add(1)
			go func() {
				defer wg.Done()
				body, ctype := multipartBody(part{field: "file", filename: "race.bin", body: content})
				req, _ := http.NewRequest("PUT", e.srv.URL+"/v1/files/"+f.ID, body)
				req.Header.Set("Content-Type", ctype)
				req.Header.Set("X-Hasura-Admin-Secret", adminSecret)
				resp, err := e.srv.Client().Do(req)
				if err != nil {
					errs <- err.Error()
					return
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					errs <- fmt.Sprintf("status %d: %s", resp.StatusCode, b)
				}
			}()
		}
		wg.Wait()
		close(errs)
		for msg := range errs {
			t.Fatalf("round %d: replace failed: %s", round, msg)
		}
		resp := e.do("GET", "/v1/files/"+f.ID, nil, true)
		got := mustStatus(t, resp, http.StatusOK, nil)
		if !sums[md5.Sum(got)] {
			t.Fatalf("round %d: stored file (%d bytes) is none of the uploads", round, len(got))
		}
	}
}

// Replace takes the name of the new file part (hasura-storage: the multipart filename).
func TestCompatReplaceTakesNewName(t *testing.T) {
	e := newEnv(t)
	f := e.uploadOne("default", "old.txt", []byte("one"))
	body, ctype := multipartBody(part{field: "file", filename: "new name.txt", body: []byte("two")})
	var got hasura.FileMetadata
	mustStatus(t, e.do("PUT", "/v1/files/"+f.ID, body, true, "Content-Type", ctype), http.StatusOK, &got)
	if got.Name != "new name.txt" {
		t.Fatalf("replaced file is named %q, want the new part's filename", got.Name)
	}
	body, ctype = multipartBody(part{field: "file", filename: "part.txt", body: []byte("three")},
		part{field: "metadata", body: []byte(`{"name":"explicit.txt"}`)})
	mustStatus(t, e.do("PUT", "/v1/files/"+f.ID, body, true, "Content-Type", ctype), http.StatusOK, &got)
	if got.Name != "explicit.txt" {
		t.Fatalf("a name given in metadata lost to the filename: %q", got.Name)
	}
}

// If-Modified-Since and If-Unmodified-Since written with a "UTC" zone (Go's
// time.RFC1123, what Nhost's Go client sends) or a numeric offset are honoured.
func TestCompatConditionalDatesUTC(t *testing.T) {
	e := newEnv(t)
	f := e.uploadOne("default", "d.txt", []byte("dated"))
	later := f.UpdatedAt.Add(time.Hour).UTC()
	earlier := f.UpdatedAt.Add(-time.Hour).UTC()
	for _, layout := range []string{time.RFC1123, time.RFC1123Z, http.TimeFormat} {
		resp := e.do("GET", "/v1/files/"+f.ID, nil, true, "If-Modified-Since", later.Format(layout))
		mustStatus(t, resp, http.StatusNotModified, nil)
		resp = e.do("GET", "/v1/files/"+f.ID, nil, true, "If-Unmodified-Since", earlier.Format(layout))
		resp.Body.Close()
		if resp.StatusCode != http.StatusPreconditionFailed {
			t.Fatalf("If-Unmodified-Since %q: status %d, want 412", earlier.Format(layout), resp.StatusCode)
		}
		resp = e.do("GET", "/v1/files/"+f.ID, nil, true, "If-Modified-Since", earlier.Format(layout))
		mustStatus(t, resp, http.StatusOK, nil)
	}
	// A zone abbreviation that is not UTC is not guessed at: the condition is ignored.
	mustStatus(t, e.do("GET", "/v1/files/"+f.ID, nil, true, "If-Modified-Since", later.Format("Mon, 02 Jan 2006 15:04:05")+" PST"), http.StatusOK, nil)
}

// The ops calls answer in hasura-storage's shape: file rows under "metadata",
// orphan blob keys under "files"; never null.
func TestCompatOpsShapes(t *testing.T) {
	e := newEnv(t)
	for path, key := range map[string]string{
		"list-broken-metadata": "metadata", "delete-broken-metadata": "metadata", "list-not-uploaded": "metadata",
		"list-orphans": "files", "delete-orphans": "files",
	} {
		var out map[string]json.RawMessage
		mustStatus(t, e.do("POST", "/v1/ops/"+path, nil, true), http.StatusOK, &out)
		if string(out[key]) != "[]" || len(out) != 1 {
			t.Errorf("%s answered %v, want {%q: []}", path, out, key)
		}
	}
}

// The Nhost JS SDK sends "file[]" before "bucket-id": the upload goes to the bucket
// named after the files, under that bucket's rules.
func TestCompatBucketIDAfterFiles(t *testing.T) {
	e := newEnv(t, envOptions{jwtSecret: jwtConfig, rules: matrixRules})
	mustStatus(t, e.do("POST", "/v1/buckets", strings.NewReader(`{"id":"priv"}`), true), http.StatusCreated, nil)
	body, ctype := multipartBody(part{field: "file[]", filename: "a.txt", body: []byte("first")},
		part{field: "metadata[]", body: []byte(`{"name":"named.txt"}`)},
		part{field: "file[]", filename: "b.txt", body: []byte("second")},
		part{field: "bucket-id", body: []byte("priv")})
	alice := "Bearer " + token(t, "user", "alice")
	var out uploadResp
	mustStatus(t, e.do("POST", "/v1/files", body, false, "Content-Type", ctype, "Authorization", alice), http.StatusCreated, &out)
	if len(out.ProcessedFiles) != 2 || out.ProcessedFiles[0].BucketID != "priv" || out.ProcessedFiles[1].BucketID != "priv" ||
		out.ProcessedFiles[0].Name != "named.txt" || out.ProcessedFiles[1].Name != "b.txt" || out.ProcessedFiles[0].UploadedByUserID != "alice" {
		t.Fatalf("upload with bucket-id last: %+v", out.ProcessedFiles)
	}
	// A role that may upload to no bucket is refused before any byte is stored...
	body, ctype = multipartBody(part{field: "file[]", filename: "a.txt", body: []byte("x")}, part{field: "bucket-id", body: []byte("priv")})
	mustError(t, e.do("POST", "/v1/files", body, false, "Content-Type", ctype, "Authorization", "Bearer "+token(t, "viewer", "v")), http.StatusForbidden)
	// ...and one that may upload elsewhere, when the bucket named last is not theirs.
	mustStatus(t, e.do("POST", "/v1/buckets", strings.NewReader(`{"id":"other"}`), true), http.StatusCreated, nil)
	body, ctype = multipartBody(part{field: "file[]", filename: "a.txt", body: []byte("x")}, part{field: "bucket-id", body: []byte("other")})
	mustError(t, e.do("POST", "/v1/files", body, false, "Content-Type", ctype, "Authorization", alice), http.StatusForbidden)
	assertNoOrphans(t, e)
}

// A JWT acting as role "admin" is Hasura's admin: every permission, no rules needed.
func TestCompatJWTAdminRole(t *testing.T) {
	e := newEnv(t, envOptions{jwtSecret: jwtConfig, rules: matrixRules})
	admin := "Bearer " + token(t, "admin", "root")
	f := e.uploadOne("default", "a.txt", []byte("admin's"))
	mustStatus(t, e.do("GET", "/v1/files/"+f.ID, nil, false, "Authorization", admin), http.StatusOK, nil)
	mustStatus(t, e.do("POST", "/v1/ops/list-orphans", nil, false, "Authorization", admin), http.StatusOK, nil)
	body, ctype := multipartBody(part{field: "file[]", filename: "b.txt", body: []byte("b")})
	mustStatus(t, e.do("POST", "/v1/files", body, false, "Content-Type", ctype, "Authorization", admin), http.StatusCreated, nil)
	mustStatus(t, e.do("DELETE", "/v1/files/"+f.ID, nil, false, "Authorization", admin), http.StatusNoContent, nil)
}

// A presigned URL has hasura-storage's (S3's) query parameters; a presigned download
// answers max-age = the seconds the signature has left, and private (hasura-storage:
// not private); coffer's earlier URLs still work.
func TestCompatPresignedURLShape(t *testing.T) {
	e := newEnv(t)
	f := e.uploadOne("default", "p.txt", []byte("presigned"))
	var out struct {
		URL        string `json:"url"`
		Expiration int    `json:"expiration"`
	}
	mustStatus(t, e.do("GET", "/v1/files/"+f.ID+"/presignedurl", nil, true), http.StatusOK, &out)
	u, err := url.Parse(out.URL)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k := range u.Query() {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	want := "X-Amz-Algorithm X-Amz-Checksum-Mode X-Amz-Credential X-Amz-Date X-Amz-Expires X-Amz-Signature X-Amz-SignedHeaders x-id"
	if strings.Join(keys, " ") != want {
		t.Fatalf("presigned URL parameters %v, want %s", keys, want)
	}
	resp := e.do("GET", strings.TrimPrefix(out.URL, e.srv.URL), nil, false)
	mustStatus(t, resp, http.StatusOK, nil)
	cc := resp.Header.Get("Cache-Control")
	var age int
	if _, err := fmt.Sscanf(cc, "private, max-age=%d", &age); err != nil || age > out.Expiration || age < out.Expiration-5 ||
		resp.Header.Get("Surrogate-Control") != "" {
		t.Fatalf("presigned download Cache-Control %q, Surrogate-Control %q, want private, max-age <= %d (seconds left) and none",
			cc, resp.Header.Get("Surrogate-Control"), out.Expiration)
	}
	old, _ := auth.NewSigner("k1", map[string][]byte{"k1": bytes.Repeat([]byte("k"), 32)}) // the env's key
	legacy := "/v1/files/" + f.ID + "/presignedurl/contents?" + old.Sign("GET", f.ID, time.Minute, nil)
	mustStatus(t, e.do("GET", legacy, nil, false), http.StatusOK, nil)
}

// A role with no permission at all for an action is refused with 403 "you are not
// authorized" (hasura-storage: Hasura has no such permission for the role); a role
// whose permissions do not cover the file gets 404 "file not found"; with
// --hide-forbidden every such answer is 404.
func TestCompatForbiddenVersusNotFound(t *testing.T) {
	rules := `
rules:
  - role: user
    buckets: [priv]
    upload: {presets: {uploaded_by_user_id: X-Hasura-User-Id}}
    read: {filter: ` + ownerRule + `}
`
	for _, hide := range []bool{false, true} {
		t.Run(fmt.Sprintf("hide=%v", hide), func(t *testing.T) {
			e := newEnv(t, envOptions{jwtSecret: jwtConfig, rules: rules, hide: hide})
			mustStatus(t, e.do("POST", "/v1/buckets", strings.NewReader(`{"id":"priv"}`), true), http.StatusCreated, nil)
			alice := []string{"Authorization", "Bearer " + token(t, "user", "alice")}
			bob := []string{"Authorization", "Bearer " + token(t, "user", "bob")}
			f := e.uploadAs(t, alice, "priv", "a.txt")
			forbidden := http.StatusForbidden
			if hide {
				forbidden = http.StatusNotFound
			}
			for _, c := range []struct {
				name, method, path string
				who                []string
				want               int
				msg                string
			}{
				{"public role reads", "GET", "/v1/files/" + f.ID, nil, forbidden, ""},
				{"public role reads a missing id", "GET", "/v1/files/00000000-0000-4000-8000-000000000000", nil, forbidden, ""},
				{"public role presigns", "GET", "/v1/files/" + f.ID + "/presignedurl", nil, forbidden, ""},
				{"other user reads", "GET", "/v1/files/" + f.ID, bob, http.StatusNotFound, "file not found"},
				{"owner deletes without a delete rule", "DELETE", "/v1/files/" + f.ID, alice, forbidden, ""},
				{"other user deletes", "DELETE", "/v1/files/" + f.ID, bob, http.StatusNotFound, "file not found"},
			} {
				resp := e.doAs(c.method, c.path, nil, c.who)
				msg := mustError(t, resp, c.want)
				if c.msg == "" && c.want == http.StatusForbidden {
					c.msg = "you are not authorized"
				}
				if c.msg != "" && msg != c.msg {
					t.Errorf("%s: message %q, want %q", c.name, msg, c.msg)
				}
			}
			body, ctype := multipartBody(part{field: "file[]", filename: "x", body: []byte("x")})
			resp := e.do("POST", "/v1/files", body, false, "Content-Type", ctype)
			var out struct {
				Error struct {
					Data    any    `json:"data"`
					Message string `json:"message"`
				} `json:"error"`
				ProcessedFiles []any `json:"processedFiles"`
			}
			raw := mustStatus(t, resp, http.StatusForbidden, &out)
			if out.Error.Message != "you are not authorized" || out.ProcessedFiles == nil || !strings.Contains(string(raw), `"data":null`) {
				t.Errorf("anonymous upload answered %s, want hasura-storage's 403 with processedFiles: []", raw)
			}
		})
	}
}

// Upload and replace answers carry "metadata": null when none was given and no
// "uploadedByUserId" unless a permission preset set it (hasura-storage); the caller's
// JWT does not make it the uploader by itself.
func TestCompatUploadResponseFields(t *testing.T) {
	rules := `
rules:
  - role: user
    buckets: [default]
    upload: {}
  - role: owner
    buckets: [default]
    upload: {presets: {uploaded_by_user_id: X-Hasura-User-Id}}
`
	e := newEnv(t, envOptions{jwtSecret: jwtConfig, rules: rules})
	check := func(who []string, wantUploader string) {
		t.Helper()
		body, ctype := multipartBody(part{field: "file[]", filename: "x.txt", body: []byte("x")})
		var out map[string][]map[string]json.RawMessage
		mustStatus(t, e.doAs("POST", "/v1/files", body, who, "Content-Type", ctype), http.StatusCreated, &out)
		f := out["processedFiles"][0]
		if string(f["metadata"]) != "null" {
			t.Errorf("metadata %s, want null", f["metadata"])
		}
		up, ok := f["uploadedByUserId"]
		switch {
		case wantUploader == "" && ok:
			t.Errorf("uploadedByUserId %s present without a preset", up)
		case wantUploader != "" && string(up) != `"`+wantUploader+`"`:
			t.Errorf("uploadedByUserId %s, want %q", up, wantUploader)
		}
	}
	check([]string{"X-Hasura-Admin-Secret", adminSecret}, "")
	check([]string{"Authorization", "Bearer " + token(t, "user", "alice")}, "")
	check([]string{"Authorization", "Bearer " + token(t, "owner", "olga")}, "olga")
	f := e.uploadOne("default", "m.txt", []byte("m"))
	body, ctype := multipartBody(part{field: "file", filename: "m.txt", body: []byte("n")},
		part{field: "metadata", body: []byte(`{"metadata":{"k":"v"}}`)})
	var got map[string]json.RawMessage
	mustStatus(t, e.do("PUT", "/v1/files/"+f.ID, body, true, "Content-Type", ctype), http.StatusOK, &got)
	if string(got["metadata"]) != `{"k":"v"}` {
		t.Errorf("replace metadata %s", got["metadata"])
	}
}

// Download headers as hasura-storage sends them: Content-Disposition with the
// query-escaped name in quotes, Surrogate-Control mirroring Cache-Control, a
// Surrogate-Key; 304 with validators and caching headers only; 412 with an empty
// body, the ETag and the caching headers. That is an anonymous download's (a public
// bucket); one with the admin secret is private: Cache-Control "private, ..." and no
// Surrogate-Control (hasura-storage sends the bucket's value on every download).
func TestCompatDownloadHeaders(t *testing.T) {
	e := newEnv(t)
	mustStatus(t, e.do("PATCH", "/v1/buckets/default", strings.NewReader(`{"public":true}`), true), http.StatusOK, nil)
	f := e.uploadOne("default", "dir/my file é.txt", []byte("headers"))
	for _, c := range []struct {
		admin            bool
		cache, surrogate string
	}{{false, "max-age=3600", "max-age=3600"}, {true, "private, max-age=3600", ""}} {
		resp := e.do("GET", "/v1/files/"+f.ID, nil, c.admin)
		mustStatus(t, resp, http.StatusOK, nil)
		want := map[string]string{
			"Content-Disposition": `inline; filename="dir%2Fmy+file+%C3%A9.txt"`,
			"Cache-Control":       c.cache,
			"Surrogate-Control":   c.surrogate,
			"Surrogate-Key":       f.ID,
			"Etag":                f.ETag,
			"Accept-Ranges":       "bytes",
		}
		for k, v := range want {
			if got := resp.Header.Get(k); got != v {
				t.Errorf("admin=%v: 200 %s: %q, want %q", c.admin, k, got, v)
			}
		}
		resp = e.do("GET", "/v1/files/"+f.ID, nil, c.admin, "If-None-Match", f.ETag)
		body := mustStatus(t, resp, http.StatusNotModified, nil)
		for _, k := range []string{"Content-Disposition", "Accept-Ranges", "Surrogate-Key", "Content-Type"} {
			if v := resp.Header.Get(k); v != "" {
				t.Errorf("admin=%v: 304 carries %s: %q", c.admin, k, v)
			}
		}
		if resp.Header.Get("Etag") == "" || resp.Header.Get("Cache-Control") != c.cache || resp.Header.Get("Surrogate-Control") != c.surrogate {
			t.Errorf("admin=%v: 304 headers %v", c.admin, resp.Header)
		}
		resp = e.do("GET", "/v1/files/"+f.ID, nil, c.admin, "If-Match", `"other"`)
		body = mustStatus(t, resp, http.StatusPreconditionFailed, nil)
		if len(body) != 0 || resp.Header.Get("Etag") != f.ETag || resp.Header.Get("Cache-Control") != c.cache ||
			resp.Header.Get("Surrogate-Control") != c.surrogate || resp.Header.Get("Content-Disposition") != "" {
			t.Errorf("admin=%v: 412: body %q, headers %v", c.admin, body, resp.Header)
		}
	}
}

// w and h together give exactly w×h, cropped from the centre (hasura-storage's libvips
// thumbnail with crop centre): square avatars stay square.
func TestCompatSquareCrop(t *testing.T) {
	e, path, _ := imageEnv(t) // a 640×480 JPEG
	for q, want := range map[string][2]int{"w=100&h=100": {100, 100}, "w=50&h=120": {50, 120}, "w=100": {100, 75}} {
		b := mustStatus(t, e.do("GET", path+"?"+q, nil, true), http.StatusOK, nil)
		if w, h := decode(t, "jpeg", b); w != want[0] || h != want[1] {
			t.Errorf("%s: %dx%d, want %dx%d", q, w, h, want[0], want[1])
		}
	}
}

// Error bodies are hasura-storage's, byte for byte: {"error":{"data":null,"message":...}}
// with the message also in X-Error.
func TestCompatErrorBody(t *testing.T) {
	e := newEnv(t)
	resp := e.do("GET", "/v1/files/00000000-0000-4000-8000-000000000000", nil, true)
	body := mustStatus(t, resp, http.StatusNotFound, nil)
	if string(body) != `{"error":{"data":null,"message":"file not found"}}`+"\n" || resp.Header.Get("X-Error") != "file not found" {
		t.Fatalf("error body %q, X-Error %q", body, resp.Header.Get("X-Error"))
	}
	mp, ctype := multipartBody(part{field: "bucket-id", body: []byte("nope")}, part{field: "file[]", filename: "a", body: []byte("a")})
	raw := mustStatus(t, e.do("POST", "/v1/files", mp, true, "Content-Type", ctype), http.StatusNotFound, nil)
	// hasura-storage's UploadFiles answers a failed bucket lookup with the nil list its
	// upload returned: "processedFiles":null.
	if string(raw) != `{"error":{"data":null,"message":"bucket not found"},"processedFiles":null}`+"\n" {
		t.Fatalf("upload to a missing bucket answered %s", raw)
	}
}

// A bucket with cacheControlShared answers every download as hasura-storage does:
// the bucket's cacheControl in Cache-Control and Surrogate-Control, with the admin
// secret too, on the fast path and net/http (a Range), and a presigned URL's max-age
// without private. Turned off again, the same downloads are private.
func TestCacheControlSharedOptIn(t *testing.T) {
	e := newEnv(t)
	const cc = "public, max-age=60"
	mustStatus(t, e.do("PATCH", "/v1/buckets/default", strings.NewReader(`{"cacheControl":"`+cc+`","cacheControlShared":true}`), true), http.StatusOK, nil)
	f := e.uploadOne("default", "s.txt", []byte("shared by a CDN"))
	var out struct {
		URL string `json:"url"`
	}
	mustStatus(t, e.do("GET", "/v1/files/"+f.ID+"/presignedurl", nil, true), http.StatusOK, &out)
	presigned := strings.TrimPrefix(out.URL, e.srv.URL)
	for _, shared := range []bool{true, false} {
		if !shared {
			mustStatus(t, e.do("PATCH", "/v1/buckets/default", strings.NewReader(`{"cacheControlShared":false}`), true), http.StatusOK, nil)
		}
		for status, hdr := range map[int][]string{http.StatusOK: nil, http.StatusPartialContent: {"Range", "bytes=0-3"}} {
			resp := e.do("GET", "/v1/files/"+f.ID, nil, true, hdr...)
			mustStatus(t, resp, status, nil)
			want, surrogate := "private, max-age=60", ""
			if shared {
				want, surrogate = cc, cc
			}
			if resp.Header.Get("Cache-Control") != want || resp.Header.Get("Surrogate-Control") != surrogate {
				t.Errorf("shared=%v %v: Cache-Control %q, Surrogate-Control %q; want %q, %q", shared, hdr,
					resp.Header.Get("Cache-Control"), resp.Header.Get("Surrogate-Control"), want, surrogate)
			}
		}
		resp := e.do("GET", presigned, nil, false)
		mustStatus(t, resp, http.StatusOK, nil)
		cc, sc := resp.Header.Get("Cache-Control"), resp.Header.Get("Surrogate-Control")
		if strings.HasPrefix(cc, "private") == shared || !strings.Contains(cc, "max-age=") || (sc == cc) != shared {
			t.Errorf("shared=%v: presigned Cache-Control %q, Surrogate-Control %q", shared, cc, sc)
		}
	}
}

// Accept-Ranges is sent on 200 answers only, as hasura-storage sends it (its
// GetFile200 and GetFileMetadataHeaders200 headers have it, GetFile206's not): a 206
// (one range or several, direct or presigned, GET or HEAD) carries none.
func TestCompatAcceptRangesOn200Only(t *testing.T) {
	e := newEnv(t)
	f := e.uploadOne("default", "r.txt", []byte("0123456789abcdef"))
	for _, p := range e.servedPaths(f.ID) {
		for _, m := range []string{"GET", "HEAD"} {
			resp := e.do(m, p, nil, true)
			mustStatus(t, resp, http.StatusOK, nil)
			if got := resp.Header.Get("Accept-Ranges"); got != "bytes" {
				t.Errorf("%s %s 200: Accept-Ranges %q, want bytes", m, short(p), got)
			}
			for _, rg := range []string{"bytes=0-3", "bytes=0-1,4-5"} {
				resp = e.do(m, p, nil, true, "Range", rg)
				mustStatus(t, resp, http.StatusPartialContent, nil)
				if got, ok := resp.Header["Accept-Ranges"]; ok {
					t.Errorf("%s %s %s 206: Accept-Ranges %q, want none", m, short(p), rg, got)
				}
			}
		}
	}
}

// A HEAD answer that is an error (401, 404, 412, 416, a route's own 404 and 405)
// carries the status and X-Error but no Content-Length or Content-Type of a body it
// does not send, as hasura-storage's HEAD answers (GetFileMetadataHeadersdefaultResponse);
// the same errors to GET keep theirs.
func TestCompatHeadErrorsBare(t *testing.T) {
	e := newEnv(t)
	f := e.uploadOne("default", "h.txt", []byte("0123456789"))
	cases := []struct {
		name, path string
		admin      bool
		hdr        []string
		status     int
		xError     bool
	}{
		{"missing file", "/v1/files/00000000-0000-4000-8000-000000000000", true, nil, http.StatusNotFound, true},
		{"wrong admin secret", "/v1/files/" + f.ID, false, []string{"X-Hasura-Admin-Secret", "nope"}, http.StatusUnauthorized, true},
		{"If-Match fails", "/v1/files/" + f.ID, true, []string{"If-Match", `"other"`}, http.StatusPreconditionFailed, false},
		{"unsatisfiable range", "/v1/files/" + f.ID, true, []string{"Range", "bytes=50-60"}, http.StatusRequestedRangeNotSatisfiable, true},
		{"no such route", "/v1/nowhere", true, nil, http.StatusNotFound, true},
		{"bad transformation", "/v1/files/" + f.ID + "?w=abc", true, nil, http.StatusBadRequest, true},
	}
	for _, c := range cases {
		resp := e.do("HEAD", c.path, nil, c.admin, c.hdr...)
		mustStatus(t, resp, c.status, nil)
		for _, k := range []string{"Content-Length", "Content-Type"} {
			if v, ok := resp.Header[k]; ok {
				t.Errorf("HEAD %s (%d): %s %q, want none", c.name, c.status, k, v)
			}
		}
		if (resp.Header.Get("X-Error") != "") != c.xError {
			t.Errorf("HEAD %s (%d): X-Error %q", c.name, c.status, resp.Header.Get("X-Error"))
		}
		resp = e.do("GET", c.path, nil, c.admin, c.hdr...)
		body := mustStatus(t, resp, c.status, nil)
		if resp.Header.Get("Content-Length") != fmt.Sprint(len(body)) {
			t.Errorf("GET %s (%d): Content-Length %q for %d bytes", c.name, c.status, resp.Header.Get("Content-Length"), len(body))
		}
	}
}

// The 403 and 404 of an upload carry no X-Error (hasura-storage answers its upload
// step's failures with UploadFilesdefaultJSONResponse, which sets none), the other
// routes' keep it, and so does an upload's 400.
func TestCompatUploadErrorsWithoutXError(t *testing.T) {
	e := newEnv(t, envOptions{jwtSecret: jwtConfig, rules: `{"rules":[{"role":"user","buckets":["default"],"read":{}}]}`})
	user := []string{"Authorization", "Bearer " + token(t, "user", "alice")}
	mp, ctype := multipartBody(part{field: "file[]", filename: "a", body: []byte("a")})
	resp := e.doAs("POST", "/v1/files", mp, user, "Content-Type", ctype)
	mustStatus(t, resp, http.StatusForbidden, nil)
	if v, ok := resp.Header["X-Error"]; ok {
		t.Errorf("upload 403: X-Error %q, want none", v)
	}
	mp, ctype = multipartBody(part{field: "bucket-id", body: []byte("nope")}, part{field: "file[]", filename: "a", body: []byte("a")})
	resp = e.do("POST", "/v1/files", mp, true, "Content-Type", ctype)
	mustStatus(t, resp, http.StatusNotFound, nil)
	if v, ok := resp.Header["X-Error"]; ok {
		t.Errorf("upload 404: X-Error %q, want none", v)
	}
	resp = e.do("POST", "/v1/files", strings.NewReader("x"), true, "Content-Type", "text/plain")
	mustStatus(t, resp, http.StatusBadRequest, nil)
	if resp.Header.Get("X-Error") == "" {
		t.Error("upload 400 without X-Error")
	}
	resp = e.doAs("GET", "/v1/ops/virus-rejections", nil, user)
	mustStatus(t, resp, http.StatusForbidden, nil)
	if resp.Header.Get("X-Error") == "" {
		t.Error("ops 403 without X-Error")
	}
	resp = e.doAs("GET", "/v1/files/00000000-0000-4000-8000-000000000000", nil, user)
	mustStatus(t, resp, http.StatusNotFound, nil)
	if resp.Header.Get("X-Error") != "file not found" {
		t.Errorf("download 404: X-Error %q", resp.Header.Get("X-Error"))
	}
}

// The sandbox policy of active types is Nhost storage's, word for word.
func TestCompatSandboxCSP(t *testing.T) {
	e := newEnv(t)
	f := e.uploadTyped("default", "p.html", "text/html", "<html><script>x</script></html>")
	for _, p := range e.servedPaths(f.ID) {
		for _, m := range []string{"GET", "HEAD"} {
			resp := e.do(m, p, nil, true)
			mustStatus(t, resp, http.StatusOK, nil)
			if got := resp.Header.Values("Content-Security-Policy"); len(got) != 1 || got[0] != "default-src 'none'; sandbox" {
				t.Errorf("%s %s: Content-Security-Policy %q", m, short(p), got)
			}
		}
	}
}
