package hasura_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// TestBucketCacheControlValidated (D6): a cacheControl with CR/LF, another control
// character or non-ASCII is 400 naming the field on create and update, and the
// stored value stays; public downloads carry the valid value unchanged (private ones
// without the shared-cache directives). Before the fix the PATCH answered 200 and
// stored the value.
func TestBucketCacheControlValidated(t *testing.T) {
	e := newEnv(t)
	for _, v := range []string{"max-age=1\r\nSet-Cookie: a=b", "max-age=1\x00", "max-age=1\x0b", "max-age=1 ☃", "max-age=1,"} {
		body, _ := json.Marshal(map[string]string{"cacheControl": v})
		msg := mustError(t, e.do("PATCH", "/v1/buckets/default", strings.NewReader(string(body)), true), http.StatusBadRequest)
		if !strings.HasPrefix(msg, "cacheControl") {
			t.Errorf("PATCH %q: message %q does not name cacheControl", v, msg)
		}
		create, _ := json.Marshal(map[string]string{"id": "cc", "cacheControl": v})
		mustError(t, e.do("POST", "/v1/buckets", strings.NewReader(string(create)), true), http.StatusBadRequest)
	}
	var b struct{ CacheControl string }
	mustStatus(t, e.do("GET", "/v1/buckets/default", nil, true), http.StatusOK, &b)
	if b.CacheControl != "max-age=3600" {
		t.Fatalf("stored cacheControl %q", b.CacheControl)
	}
	const cc = `public, no-cache="Set-Cookie", s-maxage=600, max-age=60`
	mustStatus(t, e.do("PATCH", "/v1/buckets/default", strings.NewReader(`{"public":true,"cacheControl":`+jsonString(cc)+`}`), true), http.StatusOK, nil)
	f := e.uploadOne("default", "a.txt", []byte("hi"))
	resp := e.do("GET", "/v1/files/"+f.ID, nil, false)
	mustStatus(t, resp, http.StatusOK, nil)
	if resp.Header.Get("Cache-Control") != cc || resp.Header.Get("Surrogate-Control") != cc {
		t.Fatalf("anonymous: Cache-Control %q, Surrogate-Control %q", resp.Header.Get("Cache-Control"), resp.Header.Get("Surrogate-Control"))
	}
	resp = e.do("GET", "/v1/files/"+f.ID, nil, true)
	mustStatus(t, resp, http.StatusOK, nil)
	if resp.Header.Get("Cache-Control") != `private, no-cache="Set-Cookie", max-age=60` || resp.Header.Get("Surrogate-Control") != "" {
		t.Fatalf("admin: Cache-Control %q, Surrogate-Control %q", resp.Header.Get("Cache-Control"), resp.Header.Get("Surrogate-Control"))
	}
}

func jsonString(s string) string { b, _ := json.Marshal(s); return string(b) }

// TestBucketMaxUploadZero pins the documented meaning of maxUploadFileSize 0: no
// bucket limit, while minUploadFileSize still applies (hasura-storage would refuse
// every non-empty file; see docs/compatibility.md). A positive maximum
// below the minimum is refused.
func TestBucketMaxUploadZero(t *testing.T) {
	e := newEnv(t)
	mustStatus(t, e.do("PATCH", "/v1/buckets/default", strings.NewReader(`{"maxUploadFileSize":0,"minUploadFileSize":1}`), true), http.StatusOK, nil)
	e.uploadOne("default", "big.bin", content(3<<20))
	resp := e.upload(true, part{field: "file[]", filename: "empty", body: nil})
	if msg := mustError(t, resp, http.StatusBadRequest); !strings.Contains(msg, "minimum of 1 bytes") {
		t.Fatalf("empty upload: %q", msg)
	}
	msg := mustError(t, e.do("PATCH", "/v1/buckets/default", strings.NewReader(`{"maxUploadFileSize":5,"minUploadFileSize":6}`), true), http.StatusBadRequest)
	if !strings.Contains(msg, "maxUploadFileSize") {
		t.Fatalf("max below min: %q", msg)
	}
}
