package hasura_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/coffer/coffer/virusscan/clamd/clamdtest"
)

// The golden tests pin the JSON bodies of the face byte for byte: field names and
// order, omitempty and null, the time format and the trailing newline. Timestamps
// (RFC 3339, as time.Time marshals them) and generated UUIDs vary from run to run:
// they are replaced by <time> and <id> before comparing (generated secrets by <secret>), after the test's own
// replacements (e.g. a receiver's URL).
var (
	goldenTime = regexp.MustCompile(`"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?(Z|[+-]\d\d:\d\d)"`)
	goldenUUID = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	// goldenSecretRE is a generated webhook secret ("whsec_" and 32 bytes, base64url).
	goldenSecretRE = regexp.MustCompile(`"whsec_[A-Za-z0-9_-]{43}"`)
)

// golden returns b with the replacements old, new... applied, then times and ids.
func golden(b []byte, repl ...string) string {
	s := strings.NewReplacer(repl...).Replace(string(b))
	s = goldenSecretRE.ReplaceAllString(goldenTime.ReplaceAllString(s, `"<time>"`), `"<secret>"`)
	return goldenUUID.ReplaceAllString(s, "<id>")
}

// checkGolden compares the normalized body of resp (status want) with golden.
func checkGolden(t *testing.T, resp *http.Response, status int, want string, repl ...string) []byte {
	t.Helper()
	b := mustStatus(t, resp, status, nil)
	if got := golden(b, repl...); got != want {
		t.Errorf("%s %s:\n got %s\nwant %s", resp.Request.Method, resp.Request.URL.Path, got, want)
	}
	return b
}

const goldenBucket = `{"id":"golden","minUploadFileSize":1,"maxUploadFileSize":100,` +
	`"allowedMimeTypes":["text/plain","image/*"],"cacheControl":"max-age=3600","downloadExpiration":30,` +
	`"presignedUrlsEnabled":true,"public":true,"allowInline":false,"cacheControlShared":false,"createdAt":"<time>","updatedAt":"<time>"}`

const goldenDefaultBucket = `{"id":"default","minUploadFileSize":1,"maxUploadFileSize":50000000,` +
	`"allowedMimeTypes":[],"cacheControl":"max-age=3600","downloadExpiration":30,` +
	`"presignedUrlsEnabled":true,"public":false,"allowInline":false,"cacheControlShared":false,"createdAt":"<time>","updatedAt":"<time>"}`

// TestGoldenBucketJSON pins the bucket routes' bodies, and the messages of refused
// bodies (they name the decoded fields).
func TestGoldenBucketJSON(t *testing.T) {
	e := newEnv(t)
	in := `{"id":"golden","maxUploadFileSize":100,"allowedMimeTypes":["text/plain","image/*"],"public":true}`
	checkGolden(t, e.do("POST", "/v1/buckets", strings.NewReader(in), true), http.StatusCreated, goldenBucket+"\n")
	checkGolden(t, e.do("GET", "/v1/buckets/golden", nil, true), http.StatusOK, goldenBucket+"\n")
	checkGolden(t, e.do("GET", "/v1/buckets", nil, true), http.StatusOK,
		`{"buckets":[`+goldenDefaultBucket+`,`+goldenBucket+`]}`+"\n")
	patch := `{"cacheControl":"no-store","allowInline":true,"cacheControlShared":true,"allowedMimeTypes":null,"minUploadFileSize":null}`
	patched := []string{`"max-age=3600"`, `"no-store"`, `"allowInline":false`, `"allowInline":true`,
		`"cacheControlShared":false`, `"cacheControlShared":true`}
	checkGolden(t, e.do("PATCH", "/v1/buckets/golden", strings.NewReader(patch), true), http.StatusOK,
		strings.NewReplacer(patched...).Replace(goldenBucket)+"\n")
	checkGolden(t, e.do("PATCH", "/v1/buckets/golden", strings.NewReader(`{"allowedMimeTypes":[]}`), true), http.StatusOK,
		strings.NewReplacer(append(patched, `["text/plain","image/*"]`, `[]`)...).Replace(goldenBucket)+"\n")
	for _, c := range []struct{ method, path, body, want string }{
		{"PATCH", "/v1/buckets/golden", `{"public":"yes"}`,
			`json: cannot unmarshal string into Go struct field BucketUpdate.public of type bool`},
		{"PATCH", "/v1/buckets/golden", `{"surprise":1}`, `json: unknown field \"surprise\"`},
		{"PATCH", "/v1/buckets/golden", `{"id":"other"}`, `json: unknown field \"id\"`},
		{"PATCH", "/v1/buckets/golden", `{} {}`, `trailing data after the object`},
		{"POST", "/v1/buckets", `{"id":"x2","maxUploadFileSize":"big"}`,
			`json: cannot unmarshal string into Go struct field bucketCreateJSON.BucketUpdate.maxUploadFileSize of type int64`},
		{"POST", "/v1/buckets", `{"id":"x3","createdAt":"2020-01-01T00:00:00Z"}`, `json: unknown field \"createdAt\"`},
		{"POST", "/v1/buckets", `[]`, `must be an object`},
	} {
		want := `{"error":{"data":null,"message":"invalid JSON body: ` + c.want + `"}}` + "\n"
		checkGolden(t, e.do(c.method, c.path, strings.NewReader(c.body), true), http.StatusBadRequest, want)
	}
}

// rawReceiver records the bodies POSTed to it, keyed by their event type.
type rawReceiver struct {
	mu     sync.Mutex
	bodies map[string][]string
}

func (h *rawReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var ev struct{ Type string }
	_ = json.Unmarshal(body, &ev)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.bodies[ev.Type] = append(h.bodies[ev.Type], string(body))
}

// got returns the bodies of events of type typ, sorted.
func (h *rawReceiver) got(typ string) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := append([]string(nil), h.bodies[typ]...)
	sort.Strings(out)
	return out
}

func newRawReceiver(t *testing.T) (*rawReceiver, string) {
	rcv := &rawReceiver{bodies: map[string][]string{}}
	srv := httptest.NewServer(rcv)
	t.Cleanup(srv.Close)
	return rcv, srv.URL
}

const goldenSecret = "golden-secret-0123456789"

// TestGoldenWebhookJSON pins the webhook routes' bodies and the event payloads
// delivered to a receiver, one per kind of change.
func TestGoldenWebhookJSON(t *testing.T) {
	e := newEnv(t, envOptions{webhooks: true})
	rcv, url := newRawReceiver(t)
	in := `{"url":"` + url + `/hook","events":["bucket.created","file.created","file.metadata_updated","file.deleted"],` +
		`"secret":"` + goldenSecret + `"}`
	sub := `{"id":"<id>","bucketId":"","events":["bucket.created","file.created","file.metadata_updated","file.deleted"],` +
		`"url":"<url>/hook",%s"createdAt":"<time>"}`
	created := checkGolden(t, e.do("POST", "/v1/webhooks", strings.NewReader(in), true), http.StatusCreated,
		strings.Replace(sub, "%s", `"secret":"`+goldenSecret+`",`, 1)+"\n", url, "<url>")
	var s struct{ ID string }
	if err := json.Unmarshal(created, &s); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, e.do("POST", "/v1/webhooks", strings.NewReader(`{"url":"`+url+`/quiet","bucketId":"quiet"}`), true),
		http.StatusCreated, `{"id":"<id>","bucketId":"quiet","events":[],"url":"<url>/quiet","secret":"<secret>","createdAt":"<time>"}`+"\n",
		url, "<url>")
	quiet := `{"id":"<id>","bucketId":"quiet","events":[],"url":"<url>/quiet","createdAt":"<time>"}`
	checkGolden(t, e.do("GET", "/v1/webhooks", nil, true), http.StatusOK,
		`{"webhooks":[`+strings.Replace(sub, "%s", "", 1)+`,`+quiet+`]}`+"\n", url, "<url>")
	checkGolden(t, e.do("GET", "/v1/webhooks/"+s.ID, nil, true), http.StatusOK, strings.Replace(sub, "%s", "", 1)+"\n", url, "<url>")

	goldenChanges(t, e)
	waitUntil(t, "4 deliveries", func() bool {
		var log struct{ Deliveries []struct{ State string } }
		mustStatus(t, e.do("GET", "/v1/webhooks/"+s.ID+"/deliveries?state=delivered", nil, true), http.StatusOK, &log)
		return len(log.Deliveries) == 4
	})
	var ds []string
	for i, typ := range []string{"file.deleted", "file.metadata_updated", "file.created", "bucket.created"} {
		ds = append(ds, `{"id":`+string(rune('4'-i))+`,"subscriptionId":"<id>","eventId":"<id>","eventType":"`+typ+
			`","state":"delivered","attempts":1,"nextAttemptAt":"<time>","lastStatus":200,"lastError":"","createdAt":"<time>","updatedAt":"<time>"}`)
	}
	checkGolden(t, e.do("GET", "/v1/webhooks/"+s.ID+"/deliveries", nil, true), http.StatusOK,
		`{"deliveries":[`+strings.Join(ds, ",")+`]}`+"\n")
	checkPayloads(t, rcv)
}

// goldenChanges makes the changes TestGoldenWebhookJSON's receiver hears of.
func goldenChanges(t *testing.T, e *env) {
	mustStatus(t, e.do("POST", "/v1/buckets", strings.NewReader(`{"id":"hooked","allowedMimeTypes":["text/plain"]}`), true), http.StatusCreated, nil)
	f := e.uploadOne("hooked", "a.txt", []byte("one"))
	mustStatus(t, e.do("PATCH", "/v1/files/"+f.ID+"/metadata", strings.NewReader(`{"metadata":{"k":1,"a":[true,null]}}`), true), http.StatusOK, nil)
	mustStatus(t, e.do("DELETE", "/v1/files/"+f.ID, nil, true), http.StatusNoContent, nil)
}

// checkPayloads compares the event bodies rcv got with their golden forms.
func checkPayloads(t *testing.T, rcv *rawReceiver) {
	file := func(md string) string {
		return `{"id":"<id>","bucketId":"hooked","name":"a.txt","size":3,"mimeType":"text/plain; charset=utf-8",` +
			`"etag":"\"f97c5d29941bfb1b2fdab0874906ab82\"","isUploaded":true,"uploadedByUserId":"","metadata":` + md +
			`,"createdAt":"<time>","updatedAt":"<time>"}`
	}
	head := func(typ string) string {
		return `{"id":"<id>","type":"` + typ + `","time":"<time>","bucketId":"hooked",`
	}
	actor := `"actor":{"role":"admin"}}`
	md := `{"k":1,"a":[true,null]}`
	for typ, want := range map[string]string{
		"bucket.created": head("bucket.created") + `"bucket":{"id":"hooked","minUploadFileSize":1,"maxUploadFileSize":50000000,` +
			`"allowedMimeTypes":["text/plain"],"cacheControl":"max-age=3600","downloadExpiration":30,"presignedUrlsEnabled":true,` +
			`"public":false,"allowInline":false,"cacheControlShared":false,"createdAt":"<time>","updatedAt":"<time>"},` + actor,
		"file.created":          head("file.created") + `"file":` + file(`{}`) + `,` + actor,
		"file.metadata_updated": head("file.metadata_updated") + `"file":` + file(md) + `,"before":` + file(`{}`) + `,` + actor,
		"file.deleted":          head("file.deleted") + `"file":` + file(md) + `,` + actor,
	} {
		got := rcv.got(typ)
		if len(got) != 1 || golden([]byte(got[0])) != want {
			t.Errorf("%s payload:\n got %q\nwant %s", typ, got, want)
		}
	}
}

// TestGoldenOpsJSON pins the bodies of the ops routes.
func TestGoldenOpsJSON(t *testing.T) {
	e := newEnv(t)
	for path, want := range map[string]string{
		"/v1/ops/sweep?olderThan=1h":     `{"abandonedUploads":0,"tempFiles":0,"orphanBlobs":[]}`,
		"/v1/ops/list-orphans":           `{"files":[]}`,
		"/v1/ops/list-broken-metadata":   `{"metadata":[]}`,
		"/v1/ops/list-not-uploaded":      `{"metadata":[]}`,
		"/v1/ops/delete-orphans":         `{"files":[]}`,
		"/v1/ops/delete-broken-metadata": `{"metadata":[]}`,
	} {
		checkGolden(t, e.do("POST", path, nil, true), http.StatusOK, want+"\n")
	}
}

// TestGoldenRejectionJSON pins the virus rejections listing and the file.rejected
// payload, for a user's upload (with an id and a user id) and an admin's.
func TestGoldenRejectionJSON(t *testing.T) {
	d := clamdtest.Start(t, clamdtest.Options{})
	e := newEnv(t, envOptions{clamd: d.Addr, webhooks: true, jwtSecret: jwtConfig, rules: scanRules})
	rcv, url := newRawReceiver(t)
	in := `{"url":"` + url + `","events":["file.rejected"],"secret":"` + goldenSecret + `"}`
	mustStatus(t, e.do("POST", "/v1/webhooks", strings.NewReader(in), true), http.StatusCreated, nil)
	given := "00000000-0000-4000-8000-00000000f11e"
	body, ctype := multipartBody(part{field: "bucket-id", body: []byte("default")},
		part{field: "metadata[]", body: []byte(`{"id":"` + given + `","name":"docs/eicar.com"}`)},
		part{field: "file[]", filename: "upload.bin", body: []byte(clamdtest.EICAR)})
	user := []string{"Authorization", "Bearer " + token(t, "user", "u-42")}
	mustError(t, e.doAs("POST", "/v1/files", body, user, "Content-Type", ctype), http.StatusForbidden)
	mustError(t, e.upload(true, part{field: "bucket-id", body: []byte("default")},
		part{field: "file[]", filename: "second.com", body: []byte(clamdtest.EICAR)}), http.StatusForbidden)
	sig := `"signature":"` + clamdtest.Signature + `","size":68}`
	byUser := `{"id":"<id>","time":"<time>","bucketId":"default","name":"docs/eicar.com","fileId":"<id>",` +
		`"uploadedByUserId":"u-42","role":"user",` + sig
	byAdmin := `{"id":"<id>","time":"<time>","bucketId":"default","name":"second.com","role":"admin",` + sig
	checkGolden(t, e.do("GET", "/v1/ops/virus-rejections", nil, true), http.StatusOK,
		`{"rejections":[`+byAdmin+`,`+byUser+`]}`+"\n")
	waitUntil(t, "2 file.rejected events", func() bool { return len(rcv.got("file.rejected")) == 2 })
	head := `{"id":"<id>","type":"file.rejected","time":"<time>","bucketId":"default","rejection":`
	want := []string{head + byUser + `,"actor":{"role":"user","userId":"u-42"}}`, head + byAdmin + `,"actor":{"role":"admin"}}`}
	got := rcv.got("file.rejected")
	norm := []string{golden([]byte(got[0])), golden([]byte(got[1]))}
	sort.Strings(norm)
	sort.Strings(want)
	if strings.Join(norm, "\n") != strings.Join(want, "\n") {
		t.Errorf("file.rejected payloads:\n got %s\nwant %s", norm, want)
	}
}
