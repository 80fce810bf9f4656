package hasura_test

import (
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coffer/coffer/api/hasura"
)

func content(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + i/251)
	}
	return b
}

func TestUploadDownloadRoundTrip(t *testing.T) {
	e := newEnv(t)
	data := content(300_000)
	md := `{"id":"7b2a1c9e-0d4f-4a3b-8c6d-5e4f3a2b1c0d","name":"docs/report.bin","metadata":{"k":"v"}}`
	resp := e.upload(true,
		part{field: "bucket-id", body: []byte("default")},
		part{field: "file[]", filename: "a.bin", body: data},
		part{field: "file[]", filename: "b.txt", ctype: "text/plain", body: []byte("hello\n")},
		part{field: "metadata[]", body: []byte(md)},
		part{field: "metadata[]", body: []byte(`{}`)},
	)
	var out uploadResp
	mustStatus(t, resp, http.StatusCreated, &out)
	if len(out.ProcessedFiles) != 2 {
		t.Fatalf("got %d files", len(out.ProcessedFiles))
	}
	f := out.ProcessedFiles[0]
	sum := md5.Sum(data)
	if f.ID != "7b2a1c9e-0d4f-4a3b-8c6d-5e4f3a2b1c0d" || f.Name != "docs/report.bin" || f.Size != int64(len(data)) ||
		f.BucketID != "default" || !f.IsUploaded || f.ETag != `"`+hex.EncodeToString(sum[:])+`"` || string(f.Metadata) != `{"k":"v"}` {
		t.Fatalf("metadata: %+v", f)
	}
	if g := out.ProcessedFiles[1]; g.Name != "b.txt" || !strings.HasPrefix(g.MimeType, "text/plain") {
		t.Fatalf("second file: %+v", g)
	}
	resp = e.do("GET", "/v1/files/"+f.ID, nil, true)
	got := mustStatus(t, resp, http.StatusOK, nil)
	if !bytes.Equal(got, data) {
		t.Fatal("downloaded bytes differ")
	}
	for k, want := range map[string]string{"Etag": f.ETag, "X-Content-Type-Options": "nosniff",
		"Cache-Control": "private, max-age=3600", "Content-Length": fmt.Sprint(len(data)), "Accept-Ranges": "bytes"} {
		if v := resp.Header.Get(k); v != want {
			t.Errorf("%s = %q, want %q", k, v, want)
		}
	}
	if resp.Header.Get("Last-Modified") == "" || resp.Header.Get("X-Request-Id") == "" {
		t.Error("missing Last-Modified or X-Request-Id")
	}
	if d, err := http.ParseTime(resp.Header.Get("Date")); err != nil || time.Since(d).Abs() > 2*time.Second {
		t.Errorf("Date %q: %v", resp.Header.Get("Date"), err)
	}
}

func TestHeadRangeConditional(t *testing.T) {
	e := newEnv(t)
	data := content(10_000)
	f := e.uploadOne("default", "r.bin", data)
	path := "/v1/files/" + f.ID

	resp := e.do("HEAD", path, nil, true)
	mustStatus(t, resp, http.StatusOK, nil)
	if resp.ContentLength != int64(len(data)) || resp.Header.Get("Etag") != f.ETag {
		t.Fatalf("HEAD: length %d etag %q", resp.ContentLength, resp.Header.Get("Etag"))
	}

	resp = e.do("GET", path, nil, true, "Range", "bytes=100-199")
	got := mustStatus(t, resp, http.StatusPartialContent, nil)
	if !bytes.Equal(got, data[100:200]) || resp.Header.Get("Content-Range") != "bytes 100-199/10000" {
		t.Fatalf("range: %d bytes, Content-Range %q", len(got), resp.Header.Get("Content-Range"))
	}
	resp = e.do("GET", path, nil, true, "Range", "bytes=-10")
	if got := mustStatus(t, resp, http.StatusPartialContent, nil); !bytes.Equal(got, data[len(data)-10:]) {
		t.Fatal("suffix range")
	}
	checkMultiRange(t, e, path, data)

	resp = e.do("GET", path, nil, true, "Range", "bytes=20000-")
	mustError(t, resp, http.StatusRequestedRangeNotSatisfiable)
	if resp.Header.Get("Content-Range") != "bytes */10000" {
		t.Errorf("416 Content-Range %q", resp.Header.Get("Content-Range"))
	}

	resp = e.do("GET", path, nil, true, "If-None-Match", f.ETag)
	if mustStatus(t, resp, http.StatusNotModified, nil); resp.Header.Get("Etag") != f.ETag {
		t.Error("304 without ETag")
	}
	mustStatus(t, e.do("GET", path, nil, true, "If-None-Match", `"other"`), http.StatusOK, nil)
	mustStatus(t, e.do("GET", path, nil, true, "If-Match", `"other"`), http.StatusPreconditionFailed, nil)
	resp = e.do("GET", path, nil, true, "If-Match", f.ETag)
	mustStatus(t, resp, http.StatusOK, nil)
	lm := resp.Header.Get("Last-Modified")
	mustStatus(t, e.do("GET", path, nil, true, "If-Modified-Since", lm), http.StatusNotModified, nil)
	mustStatus(t, e.do("GET", path, nil, true, "If-Unmodified-Since", "Mon, 02 Jan 2006 15:04:05 GMT"), http.StatusPreconditionFailed, nil)
	// RFC 9110: If-None-Match wins over If-Modified-Since.
	mustStatus(t, e.do("GET", path, nil, true, "If-None-Match", `"other"`, "If-Modified-Since", lm), http.StatusOK, nil)
	// If-Range with a stale validator sends the whole file.
	resp = e.do("GET", path, nil, true, "Range", "bytes=0-9", "If-Range", `"stale"`)
	if got := mustStatus(t, resp, http.StatusOK, nil); len(got) != len(data) {
		t.Fatal("If-Range mismatch should send the full file")
	}
}

func checkMultiRange(t *testing.T, e *env, path string, data []byte) {
	t.Helper()
	resp := e.do("GET", path, nil, true, "Range", "bytes=0-9,50-59")
	body := mustStatus(t, resp, http.StatusPartialContent, nil)
	_, parts, err := byteRanges(resp, body)
	if err != nil || len(parts) != 2 || !bytes.Equal(parts[0], data[0:10]) || !bytes.Equal(parts[1], data[50:60]) {
		t.Fatalf("multi-range parts differ (%v)", err)
	}
	// More ranges than the cap: the whole file instead.
	many := "bytes=" + strings.TrimSuffix(strings.Repeat("0-0,", 40), ",")
	resp = e.do("GET", path, nil, true, "Range", many)
	if got := mustStatus(t, resp, http.StatusOK, nil); len(got) != len(data) {
		t.Fatal("too many ranges should send the full file")
	}
}

func TestDeleteThenNotFound(t *testing.T) {
	e := newEnv(t)
	f := e.uploadOne("default", "d.txt", []byte("bye"))
	mustStatus(t, e.do("DELETE", "/v1/files/"+f.ID, nil, true), http.StatusNoContent, nil)
	mustError(t, e.do("GET", "/v1/files/"+f.ID, nil, true), http.StatusNotFound)
	mustError(t, e.do("HEAD", "/v1/files/"+f.ID, nil, true), http.StatusNotFound)
	mustError(t, e.do("DELETE", "/v1/files/"+f.ID, nil, true), http.StatusNotFound)
	assertNoOrphans(t, e)
}

func assertNoOrphans(t *testing.T, e *env) {
	t.Helper()
	var out struct{ Files []string }
	mustStatus(t, e.do("POST", "/v1/ops/list-orphans", nil, true), http.StatusOK, &out)
	if len(out.Files) != 0 {
		t.Fatalf("orphan blobs left: %v", out.Files)
	}
}

func TestReplace(t *testing.T) {
	e := newEnv(t)
	f := e.uploadOne("default", "r.txt", []byte("version one"))
	body, ctype := multipartBody(part{field: "metadata", body: []byte(`{"name":"renamed.txt","metadata":{"v":2}}`)},
		part{field: "file", filename: "x", ctype: "text/plain", body: []byte("version two!")})
	var g hasura.FileMetadata
	mustStatus(t, e.do("PUT", "/v1/files/"+f.ID, body, true, "Content-Type", ctype), http.StatusOK, &g)
	if g.ID != f.ID || g.ETag == f.ETag || g.Size != 12 || g.Name != "renamed.txt" || string(g.Metadata) != `{"v":2}` {
		t.Fatalf("after replace: %+v", g)
	}
	if got := mustStatus(t, e.do("GET", "/v1/files/"+f.ID, nil, true), http.StatusOK, nil); string(got) != "version two!" {
		t.Fatalf("got %q", got)
	}
	assertNoOrphans(t, e)
	body, ctype = multipartBody(part{field: "file", filename: "x", body: []byte("x")})
	mustError(t, e.do("PUT", "/v1/files/"+f.ID, body, false, "Content-Type", ctype), http.StatusForbidden) // a role that may read nothing
	body, ctype = multipartBody(part{field: "file", filename: "x", body: []byte("x")})
	mustError(t, e.do("PUT", "/v1/files/00000000-0000-4000-8000-000000000000", body, true, "Content-Type", ctype), http.StatusNotFound)
}

func TestUploadLimits(t *testing.T) {
	e := newEnv(t)
	mustStatus(t, e.do("POST", "/v1/buckets", strings.NewReader(
		`{"id":"small","maxUploadFileSize":1000,"minUploadFileSize":2,"allowedMimeTypes":["image/*","text/plain"]}`), true), http.StatusCreated, nil)
	png := append([]byte("\x89PNG\r\n\x1a\n"), content(100)...)
	cases := []struct {
		name  string
		parts []part
		want  int
	}{
		{"too large", []part{{field: "bucket-id", body: []byte("small")}, {field: "file[]", filename: "a.png", body: append(png, content(2000)...)}}, 413},
		{"too small", []part{{field: "bucket-id", body: []byte("small")}, {field: "file[]", filename: "a.txt", body: []byte("x")}}, 400},
		{"mime", []part{{field: "bucket-id", body: []byte("small")}, {field: "file[]", filename: "a.html", body: []byte("<html><body>x</body></html>")}}, 415},
		{"second of two too large", []part{{field: "bucket-id", body: []byte("small")}, {field: "file[]", filename: "ok.png", body: png},
			{field: "file[]", filename: "big.png", body: append(png, content(5000)...)}}, 413},
		{"no bucket", []part{{field: "bucket-id", body: []byte("nope")}, {field: "file[]", filename: "a", body: []byte("aa")}}, 404},
		{"bad bucket id", []part{{field: "bucket-id", body: []byte("../x")}, {field: "file[]", filename: "a", body: []byte("aa")}}, 400},
		{"bucket after a too large file", []part{{field: "file[]", filename: "a.png", body: append(png, content(2000)...)}, {field: "bucket-id", body: []byte("small")}}, 413},
		{"bucket after a refused type", []part{{field: "file[]", filename: "a.html", body: []byte("<html><body>x</body></html>")}, {field: "bucket-id", body: []byte("small")}}, 415},
		{"bucket after a too small file", []part{{field: "file[]", filename: "a.txt", body: []byte("x")}, {field: "bucket-id", body: []byte("small")}}, 400},
		{"bucket id twice", []part{{field: "bucket-id", body: []byte("small")}, {field: "file[]", filename: "a", body: []byte("aa")}, {field: "bucket-id", body: []byte("small")}}, 400},
		{"traversal name", []part{{field: "file[]", filename: "a", body: []byte("aa")}, {field: "metadata[]", body: []byte(`{"name":"../../etc/passwd"}`)}}, 400},
		{"absolute name", []part{{field: "file[]", filename: "a", body: []byte("aa")}, {field: "metadata[]", body: []byte(`{"name":"/etc/passwd"}`)}}, 400},
		{"NUL in name", []part{{field: "file[]", filename: "a", body: []byte("aa")}, {field: "metadata[]", body: []byte(`{"name":"a\u0000b"}`)}}, 400},
		{"bad metadata json", []part{{field: "file[]", filename: "a", body: []byte("aa")}, {field: "metadata[]", body: []byte("{")}}, 400},
		{"bad id", []part{{field: "file[]", filename: "a", body: []byte("aa")}, {field: "metadata[]", body: []byte(`{"id":"nope"}`)}}, 400},
		{"metadata not object", []part{{field: "file[]", filename: "a", body: []byte("aa")}, {field: "metadata[]", body: []byte(`{"metadata":[1]}`)}}, 400},
		{"more metadata than files", []part{{field: "file[]", filename: "a", body: []byte("aa")}, {field: "metadata[]", body: []byte(`{}`)}, {field: "metadata[]", body: []byte(`{}`)}}, 400},
		{"no file", []part{{field: "bucket-id", body: []byte("small")}}, 400},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mustError(t, e.upload(true, c.parts...), c.want)
		})
	}
	var list struct{ Files []hasura.FileMetadata }
	mustStatus(t, e.do("GET", "/v1/buckets/small/files", nil, true), http.StatusOK, &list)
	if len(list.Files) != 0 {
		t.Fatalf("failed uploads left files: %+v", list.Files)
	}
	assertNoOrphans(t, e)
	mustError(t, e.do("POST", "/v1/files", strings.NewReader("x"), true, "Content-Type", "text/plain"), http.StatusBadRequest)
	mustError(t, e.do("POST", "/v1/files", strings.NewReader("--x\r\nbroken"), true, "Content-Type", "multipart/form-data; boundary=x"), http.StatusBadRequest)
}

func TestUploadConflictIsAllOrNothing(t *testing.T) {
	e := newEnv(t)
	f := e.uploadOne("default", "first.txt", []byte("one"))
	resp := e.upload(true,
		part{field: "file[]", filename: "new.txt", body: []byte("new")},
		part{field: "file[]", filename: "dup.txt", body: []byte("dup")},
		part{field: "metadata[]", body: []byte(`{}`)},
		part{field: "metadata[]", body: []byte(`{"id":"` + f.ID + `"}`)})
	mustError(t, resp, http.StatusConflict)
	var list struct{ Files []hasura.FileMetadata }
	mustStatus(t, e.do("GET", "/v1/buckets/default/files", nil, true), http.StatusOK, &list)
	if len(list.Files) != 1 {
		t.Fatalf("want only the first file, got %+v", list.Files)
	}
	assertNoOrphans(t, e)
}

func TestAccessWithoutAdmin(t *testing.T) {
	e := newEnv(t)
	f := e.uploadOne("default", "private.txt", []byte("secret"))
	mustError(t, e.upload(false, part{field: "file[]", filename: "a", body: []byte("aa")}), http.StatusForbidden)
	// The anonymous role may read nothing here: 403 for any id, existing or not.
	missing := mustError(t, e.do("GET", "/v1/files/00000000-0000-4000-8000-000000000000", nil, false), http.StatusForbidden)
	hidden := mustError(t, e.do("GET", "/v1/files/"+f.ID, nil, false), http.StatusForbidden)
	if missing != hidden {
		t.Fatalf("unreadable file answers differently from a missing one: %q vs %q", hidden, missing)
	}
	mustError(t, e.do("GET", "/v1/files/"+f.ID, nil, false, "X-Hasura-Admin-Secret", "wrong"), http.StatusUnauthorized)
	mustError(t, e.do("DELETE", "/v1/files/"+f.ID, nil, false), http.StatusForbidden)
	mustError(t, e.do("GET", "/v1/buckets", nil, false), http.StatusUnauthorized)
	mustError(t, e.do("POST", "/v1/ops/list-orphans", nil, false), http.StatusUnauthorized)

	mustStatus(t, e.do("POST", "/v1/buckets", strings.NewReader(`{"id":"pub","public":true}`), true), http.StatusCreated, nil)
	g := e.uploadOne("pub", "open.txt", []byte("hello world"))
	if got := mustStatus(t, e.do("GET", "/v1/files/"+g.ID, nil, false), http.StatusOK, nil); string(got) != "hello world" {
		t.Fatalf("public read got %q", got)
	}
	mustStatus(t, e.do("GET", "/v1/buckets/pub/files", nil, false), http.StatusOK, nil)
	mustError(t, e.do("GET", "/v1/buckets/default/files", nil, false), http.StatusForbidden)
	// Now that a public bucket exists the anonymous role may read some files: the
	// private file answers as a missing one.
	missing = mustError(t, e.do("GET", "/v1/files/00000000-0000-4000-8000-000000000000", nil, false), http.StatusNotFound)
	hidden = mustError(t, e.do("GET", "/v1/files/"+f.ID, nil, false), http.StatusNotFound)
	if missing != hidden {
		t.Fatalf("unreadable file answers differently from a missing one: %q vs %q", hidden, missing)
	}
}

func TestContentDisposition(t *testing.T) {
	e := newEnv(t)
	f := e.uploadOne("default", "page.html", []byte("<html><script>alert(1)</script></html>"))
	resp := e.do("GET", "/v1/files/"+f.ID, nil, true)
	mustStatus(t, resp, http.StatusOK, nil)
	if cd := resp.Header.Get("Content-Disposition"); !strings.HasPrefix(cd, "attachment") {
		t.Fatalf("html served with %q", cd)
	}
	mustStatus(t, e.do("PATCH", "/v1/buckets/default", strings.NewReader(`{"allowInline":true}`), true), http.StatusOK, nil)
	resp = e.do("GET", "/v1/files/"+f.ID, nil, true)
	mustStatus(t, resp, http.StatusOK, nil)
	if cd := resp.Header.Get("Content-Disposition"); !strings.HasPrefix(cd, "inline") {
		t.Fatalf("allowInline bucket served %q", cd)
	}
}

func TestPresignedURL(t *testing.T) {
	e := newEnv(t)
	f := e.uploadOne("default", "p.bin", content(5000))
	var out struct {
		URL        string `json:"url"`
		Expiration int    `json:"expiration"`
	}
	mustStatus(t, e.do("GET", "/v1/files/"+f.ID+"/presignedurl", nil, true), http.StatusOK, &out)
	if out.Expiration != 30 || !strings.HasPrefix(out.URL, e.srv.URL+"/v1/files/"+f.ID+"/presignedurl/contents?") {
		t.Fatalf("presign response %+v", out)
	}
	path := strings.TrimPrefix(out.URL, e.srv.URL)
	if got := mustStatus(t, e.do("GET", path, nil, false), http.StatusOK, nil); !bytes.Equal(got, content(5000)) {
		t.Fatal("presigned download differs")
	}
	mustStatus(t, e.do("GET", path, nil, false, "Range", "bytes=0-99"), http.StatusPartialContent, nil)
	mustError(t, e.do("GET", path+"&w=10", nil, false), http.StatusUnsupportedMediaType) // unsigned, as hasura-storage: they reach the transform, which refuses this non-image
	mustError(t, e.do("GET", strings.Replace(path, "X-Amz-Expires=30", "X-Amz-Expires=300", 1), nil, false), http.StatusForbidden)
	mustError(t, e.do("GET", strings.Replace(path, "X-Amz-Signature=", "X-Amz-Signature=0", 1), nil, false), http.StatusForbidden)
	mustError(t, e.do("GET", "/v1/files/"+f.ID+"/presignedurl/contents", nil, false), http.StatusForbidden)
	mustError(t, e.do("GET", "/v1/files/"+f.ID+"/presignedurl", nil, false), http.StatusForbidden)
	mustStatus(t, e.do("PATCH", "/v1/buckets/default", strings.NewReader(`{"presignedUrlsEnabled":false}`), true), http.StatusOK, nil)
	mustError(t, e.do("GET", "/v1/files/"+f.ID+"/presignedurl", nil, true), http.StatusForbidden)
	mustError(t, e.do("GET", path, nil, false), http.StatusForbidden)
}

func TestListPaging(t *testing.T) {
	e := newEnv(t)
	for i := 0; i < 25; i++ {
		e.uploadOne("default", fmt.Sprintf("dir/%02d.txt", i), []byte("x"))
	}
	e.uploadOne("default", "other.txt", []byte("x"))
	var names []string
	cursor := ""
	for page := 0; page < 10; page++ {
		var out struct {
			Files      []hasura.FileMetadata
			NextCursor string
		}
		mustStatus(t, e.do("GET", "/v1/buckets/default/files?prefix=dir/&limit=10&cursor="+cursor, nil, true), http.StatusOK, &out)
		for _, f := range out.Files {
			names = append(names, f.Name)
		}
		if cursor = out.NextCursor; cursor == "" {
			break
		}
	}
	if len(names) != 25 || names[0] != "dir/00.txt" || names[24] != "dir/24.txt" {
		t.Fatalf("paged names: %v", names)
	}
	mustError(t, e.do("GET", "/v1/buckets/default/files?limit=0", nil, true), http.StatusBadRequest)
	mustError(t, e.do("GET", "/v1/buckets/default/files?cursor=%21%21", nil, true), http.StatusBadRequest)
	mustError(t, e.do("GET", "/v1/buckets/nope/files", nil, true), http.StatusNotFound)
}

func TestFileMetadataRoutes(t *testing.T) {
	e := newEnv(t)
	f := e.uploadOne("default", "m.txt", []byte("abc"))
	var g hasura.FileMetadata
	mustStatus(t, e.do("PATCH", "/v1/files/"+f.ID+"/metadata", strings.NewReader(`{"name":"n/m.txt","metadata":{"a":[1,2]}}`), true), http.StatusOK, &g)
	if g.Name != "n/m.txt" || string(g.Metadata) != `{"a":[1,2]}` {
		t.Fatalf("after patch: %+v", g)
	}
	mustStatus(t, e.do("GET", "/v1/files/"+f.ID+"/metadata", nil, true), http.StatusOK, &g)
	if g.Name != "n/m.txt" {
		t.Fatalf("get metadata: %+v", g)
	}
	mustError(t, e.do("PATCH", "/v1/files/"+f.ID+"/metadata", strings.NewReader(`{"name":"../x"}`), true), http.StatusBadRequest)
	mustError(t, e.do("PATCH", "/v1/files/"+f.ID+"/metadata", strings.NewReader(`{"nome":"x"}`), true), http.StatusBadRequest)
	mustError(t, e.do("PATCH", "/v1/files/"+f.ID+"/metadata", strings.NewReader(`{"metadata":"str"}`), true), http.StatusBadRequest)
}

func TestBuckets(t *testing.T) {
	e := newEnv(t)
	var bs struct{ Buckets []map[string]any }
	mustStatus(t, e.do("GET", "/v1/buckets", nil, true), http.StatusOK, &bs)
	if len(bs.Buckets) != 1 || bs.Buckets[0]["id"] != "default" {
		t.Fatalf("buckets: %+v", bs)
	}
	var b map[string]any
	mustStatus(t, e.do("POST", "/v1/buckets", strings.NewReader(`{"id":"pics","public":true,"cacheControl":"max-age=60"}`), true), http.StatusCreated, &b)
	if b["public"] != true || b["cacheControl"] != "max-age=60" || b["maxUploadFileSize"] != float64(50000000) {
		t.Fatalf("created: %+v", b)
	}
	mustError(t, e.do("POST", "/v1/buckets", strings.NewReader(`{"id":"pics"}`), true), http.StatusConflict)
	mustError(t, e.do("POST", "/v1/buckets", strings.NewReader(`{"id":"Bad/Id"}`), true), http.StatusBadRequest)
	mustError(t, e.do("POST", "/v1/buckets", strings.NewReader(`{"id":"x","downloadExpiration":0}`), true), http.StatusBadRequest)
	mustError(t, e.do("PATCH", "/v1/buckets/pics", strings.NewReader(`{"minUploadFileSize":-1}`), true), http.StatusBadRequest)
	mustError(t, e.do("PATCH", "/v1/buckets/nope", strings.NewReader(`{}`), true), http.StatusNotFound)
	f := e.uploadOne("pics", "a.txt", []byte("x"))
	mustError(t, e.do("DELETE", "/v1/buckets/pics", nil, true), http.StatusConflict)
	mustStatus(t, e.do("DELETE", "/v1/files/"+f.ID, nil, true), http.StatusNoContent, nil)
	mustStatus(t, e.do("DELETE", "/v1/buckets/pics", nil, true), http.StatusNoContent, nil)
	mustError(t, e.do("GET", "/v1/buckets/pics", nil, true), http.StatusNotFound)
	mustError(t, e.do("DELETE", "/v1/buckets/default", nil, true), http.StatusConflict)
}

func TestMiscRoutes(t *testing.T) {
	e := newEnv(t)
	mustStatus(t, e.do("GET", "/healthz", nil, false), http.StatusOK, nil)
	var v map[string]string
	mustStatus(t, e.do("GET", "/v1/version", nil, false), http.StatusOK, &v)
	if v["buildVersion"] != "test" {
		t.Fatalf("version %v", v)
	}
	if b := mustStatus(t, e.do("GET", "/v1/openapi.yaml", nil, false), http.StatusOK, nil); !bytes.Contains(b, []byte("/v1/files/{id}/presignedurl/contents")) {
		t.Fatal("openapi.yaml incomplete")
	}
	mustError(t, e.do("GET", "/v1/nothing", nil, false), http.StatusNotFound)
	mustError(t, e.do("GET", "/v1/files/not-a-uuid", nil, true), http.StatusNotFound)
	resp := e.do("PATCH", "/v1/files", nil, true)
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("PATCH /v1/files: %d", resp.StatusCode)
	}
	resp.Body.Close()
}

func TestLegacyUpload(t *testing.T) {
	e := newEnv(t)
	body, ctype := multipartBody(part{field: "file", filename: "legacy.txt", body: []byte("old sdk")})
	var f hasura.FileMetadata
	mustStatus(t, e.do("POST", "/v1/files", body, true, "Content-Type", ctype,
		"X-Nhost-File-Id", "11111111-2222-4333-8444-555555555555", "X-Nhost-File-Name", "named.txt"), http.StatusCreated, &f)
	if f.ID != "11111111-2222-4333-8444-555555555555" || f.Name != "named.txt" {
		t.Fatalf("legacy upload: %+v", f)
	}

}
