package rpcapi_test

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"

	"connectrpc.com/connect"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/protobuf/proto"

	adminv1 "github.com/coffer/coffer/proto/gen/coffer/admin/v1"
)

// TestPermissionRefusals: admin calls without credentials are UNAUTHENTICATED, with
// a user JWT PERMISSION_DENIED, with a wrong admin secret UNAUTHENTICATED; files
// calls follow the rules for a user JWT (its own file yes, another's NOT_FOUND, a
// bucket without a read rule PERMISSION_DENIED); GetVersion needs nothing.
func TestPermissionRefusals(t *testing.T) {
	e := newEnv(t)
	e.docsWithRules(t)
	for _, tc := range []struct {
		name string
		c    clients
		code connect.Code
	}{
		{"anonymous", e.clients(anonymous()), connect.CodeUnauthenticated},
		{"user", e.clients(asUser(t, "alice")), connect.CodePermissionDenied},
		{"wrong secret", e.clients(httpClient("X-Hasura-Admin-Secret", "nope")), connect.CodeUnauthenticated},
	} {
		for what, call := range adminCalls(tc.c) {
			wantCode(t, tc.name+" "+what, call(), tc.code)
		}
	}
	_, err := e.clients(anonymous()).server.GetVersion(ctx(), req(&adminv1.GetVersionRequest{}))
	check(t, "anonymous GetVersion", err)

	mine := e.upload(asUser(t, "alice"), "docs", "mine.txt", "alice's")
	theirs := e.upload(asUser(t, "bob"), "docs", "theirs.txt", "bob's")
	alice := e.clients(asUser(t, "alice"))
	_, err = alice.files.GetFile(ctx(), req(&adminv1.GetFileRequest{Id: mine}))
	check(t, "alice GetFile her own", err)
	_, err = alice.files.GetFile(ctx(), req(&adminv1.GetFileRequest{Id: theirs}))
	wantCode(t, "alice GetFile bob's", err, connect.CodeNotFound)
	_, err = alice.files.DeleteFile(ctx(), req(&adminv1.DeleteFileRequest{Id: theirs}))
	wantCode(t, "alice DeleteFile bob's", err, connect.CodeNotFound)
	_, err = alice.files.UpdateFile(ctx(), req(&adminv1.UpdateFileRequest{Id: theirs, Name: proto.String("stolen.txt")}))
	wantCode(t, "alice UpdateFile bob's", err, connect.CodeNotFound)
	_, err = alice.files.PresignFile(ctx(), req(&adminv1.PresignFileRequest{Id: theirs}))
	wantCode(t, "alice PresignFile bob's", err, connect.CodeNotFound)
	_, err = alice.files.PresignFile(ctx(), req(&adminv1.PresignFileRequest{Id: mine}))
	check(t, "alice PresignFile her own", err)
	_, err = alice.files.ListFiles(ctx(), req(&adminv1.ListFilesRequest{BucketId: "default"}))
	wantCode(t, "alice ListFiles of a bucket without a rule", err, connect.CodePermissionDenied)
	list, err := alice.files.ListFiles(ctx(), req(&adminv1.ListFilesRequest{BucketId: "docs"}))
	check(t, "alice ListFiles", err)
	if fs := list.Msg.GetFiles(); len(fs) != 1 || fs[0].GetId() != mine {
		t.Fatalf("alice lists %v", list.Msg)
	}
	_, err = e.clients(anonymous()).files.GetFile(ctx(), req(&adminv1.GetFileRequest{Id: mine}))
	wantCode(t, "anonymous GetFile (no read rule for its role)", err, connect.CodePermissionDenied)
}

// adminCalls are every admin-only method, by name: the refusals come from the
// service (and app's node), so a method that forgot its check shows up here.
func adminCalls(c clients) map[string]func() error {
	b, w, o := c.buckets, c.webhooks, c.ops
	return map[string]func() error{
		"ListBuckets":  func() error { return errOf(b.ListBuckets(ctx(), req(&adminv1.ListBucketsRequest{}))) },
		"GetBucket":    func() error { return errOf(b.GetBucket(ctx(), req(&adminv1.GetBucketRequest{Id: "docs"}))) },
		"CreateBucket": func() error { return errOf(b.CreateBucket(ctx(), req(&adminv1.CreateBucketRequest{Id: "sneaky"}))) },
		"UpdateBucket": func() error { return errOf(b.UpdateBucket(ctx(), req(&adminv1.UpdateBucketRequest{Id: "docs"}))) },
		"DeleteBucket": func() error { return errOf(b.DeleteBucket(ctx(), req(&adminv1.DeleteBucketRequest{Id: "docs"}))) },
		"GetRules":     func() error { return errOf(c.rules.GetRules(ctx(), req(&adminv1.GetRulesRequest{}))) },
		"CheckAccess": func() error {
			return errOf(c.rules.CheckAccess(ctx(), req(&adminv1.CheckAccessRequest{Role: "user", BucketId: "docs", Action: "read"})))
		},
		"PutRules": func() error {
			return errOf(c.rules.PutRules(ctx(), req(&adminv1.PutRulesRequest{Document: "rules: []"})))
		},
		"ValidateRules": func() error {
			return errOf(c.rules.ValidateRules(ctx(), req(&adminv1.ValidateRulesRequest{Document: "rules: []"})))
		},
		"CreateWebhook": func() error {
			return errOf(w.CreateWebhook(ctx(), req(&adminv1.CreateWebhookRequest{Url: "http://hooks.test/x"})))
		},
		"ListWebhooks":  func() error { return errOf(w.ListWebhooks(ctx(), req(&adminv1.ListWebhooksRequest{}))) },
		"GetWebhook":    func() error { return errOf(w.GetWebhook(ctx(), req(&adminv1.GetWebhookRequest{Id: "w"}))) },
		"DeleteWebhook": func() error { return errOf(w.DeleteWebhook(ctx(), req(&adminv1.DeleteWebhookRequest{Id: "w"}))) },
		"ListDeliveries": func() error {
			return errOf(w.ListDeliveries(ctx(), req(&adminv1.ListDeliveriesRequest{WebhookId: "w"})))
		},
		"RedeliverDelivery": func() error {
			return errOf(w.RedeliverDelivery(ctx(), req(&adminv1.RedeliverDeliveryRequest{WebhookId: "w", DeliveryId: 1})))
		},
		"ListOrphans":          func() error { return errOf(o.ListOrphans(ctx(), req(&adminv1.ListOrphansRequest{}))) },
		"DeleteOrphans":        func() error { return errOf(o.DeleteOrphans(ctx(), req(&adminv1.DeleteOrphansRequest{}))) },
		"ListBrokenMetadata":   func() error { return errOf(o.ListBrokenMetadata(ctx(), req(&adminv1.ListBrokenMetadataRequest{}))) },
		"DeleteBrokenMetadata": func() error { return errOf(o.DeleteBrokenMetadata(ctx(), req(&adminv1.DeleteBrokenMetadataRequest{}))) },
		"ListNotUploaded":      func() error { return errOf(o.ListNotUploaded(ctx(), req(&adminv1.ListNotUploadedRequest{}))) },
		"Sweep":                func() error { return errOf(o.Sweep(ctx(), req(&adminv1.SweepRequest{}))) },
		"ListVirusRejections":  func() error { return errOf(o.ListVirusRejections(ctx(), req(&adminv1.ListVirusRejectionsRequest{}))) },
		"GetCacheStats":        func() error { return errOf(c.server.GetCacheStats(ctx(), req(&adminv1.GetCacheStatsRequest{}))) },
		"GetImageWorkers":      func() error { return errOf(c.server.GetImageWorkers(ctx(), req(&adminv1.GetImageWorkersRequest{}))) },
	}
}

// errOf returns a call's error, dropping its response.
func errOf[T any](_ *connect.Response[T], err error) error { return err }

// TestValidationDetails: a rules document and bucket settings with a mistake are
// INVALID_ARGUMENT with a BadRequest detail naming the field, and change nothing.
func TestValidationDetails(t *testing.T) {
	e := newEnv(t)
	c := e.clients(asAdmin())
	before, err := c.rules.GetRules(ctx(), req(&adminv1.GetRulesRequest{}))
	check(t, "GetRules", err)
	bad := "rules:\n  - role: user\n    buckets: [docs]\n    read: {filter: {size: {_gte: 1}}}\n    fly: true\n"
	_, err = c.rules.PutRules(ctx(), req(&adminv1.PutRulesRequest{Document: bad}))
	wantField(t, "PutRules", err, "rules[0]")
	_, err = c.rules.ValidateRules(ctx(), req(&adminv1.ValidateRulesRequest{Document: bad}))
	wantField(t, "ValidateRules", err, "rules[0]")
	after, err := c.rules.GetRules(ctx(), req(&adminv1.GetRulesRequest{}))
	check(t, "GetRules after", err)
	if after.Msg.GetDocument() != before.Msg.GetDocument() {
		t.Fatalf("rules changed by a refused document: %s", after.Msg.GetDocument())
	}
	_, err = c.buckets.CreateBucket(ctx(), req(&adminv1.CreateBucketRequest{Id: "x",
		Settings: &adminv1.BucketSettings{DownloadExpiration: proto.Int64(0)}}))
	wantField(t, "CreateBucket", err, "downloadExpiration")
	_, err = c.buckets.GetBucket(ctx(), req(&adminv1.GetBucketRequest{Id: "x"}))
	wantCode(t, "GetBucket of the refused bucket", err, connect.CodeNotFound)
	_, err = c.buckets.UpdateBucket(ctx(), req(&adminv1.UpdateBucketRequest{Id: "default",
		Settings: &adminv1.BucketSettings{Public: proto.Bool(true), MinUploadFileSize: proto.Int64(-1)}}))
	wantField(t, "UpdateBucket", err, "minUploadFileSize")
	b, err := c.buckets.GetBucket(ctx(), req(&adminv1.GetBucketRequest{Id: "default"}))
	check(t, "GetBucket default", err)
	if b.Msg.GetBucket().GetPublic() || b.Msg.GetBucket().GetMinUploadFileSize() != 1 {
		t.Fatalf("a refused update was half-applied: %v", b.Msg)
	}
}

// wantField fails t unless err is INVALID_ARGUMENT with a BadRequest detail whose
// first violation's field begins with field.
func wantField(t *testing.T, what string, err error, field string) {
	t.Helper()
	ce := wantCode(t, what, err, connect.CodeInvalidArgument)
	for _, d := range ce.Details() {
		v, derr := d.Value()
		if br, ok := v.(*errdetails.BadRequest); derr == nil && ok && len(br.GetFieldViolations()) > 0 {
			if f := br.GetFieldViolations()[0].GetField(); !strings.HasPrefix(f, field) {
				t.Fatalf("%s: field %q, want %q (%s)", what, f, field, ce.Message())
			}
			return
		}
	}
	t.Fatalf("%s: no BadRequest detail in %v", what, ce)
}

// post sends body to procedure with content type ctype as the admin and returns the
// status and body.
func (e *env) post(t *testing.T, procedure, ctype string, body []byte) (int, string) {
	r, _ := http.NewRequest("POST", e.base+procedure, bytes.NewReader(body))
	r.Header.Set("Content-Type", ctype)
	r.Header.Set("X-Hasura-Admin-Secret", adminSecret)
	resp, err := http.DefaultClient.Do(r)
	check(t, "POST "+procedure, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestMalformedRequests: malformed protobuf and JSON, an unknown JSON field (also
// under application/json; charset=utf-8, which connect-go names apart), a wrong
// content type and an oversized message get the right code (never internal), and
// no bucket is made.
func TestMalformedRequests(t *testing.T) {
	e := newEnv(t)
	const create = "/coffer.admin.v1.BucketService/CreateBucket"
	huge := `{"document":"` + strings.Repeat("x", 3<<20) + `"}`
	for _, tc := range []struct {
		name, ctype, body string
		status            int
		code              string
	}{
		{"malformed protobuf", "application/proto", "\xff\xff\xff\xff", 400, `"code":"invalid_argument"`},
		{"malformed JSON", "application/json", `{"id": "bad"`, 400, `"code":"invalid_argument"`},
		{"unknown JSON field", "application/json", `{"id": "sneaky", "publc": true}`, 400, `"code":"invalid_argument"`},
		{"unknown JSON field, charset", "application/json; charset=utf-8", `{"id": "sneaky", "publc": true}`, 400, `"code":"invalid_argument"`},
		{"wrong type in JSON", "application/json", `{"id": 5}`, 400, `"code":"invalid_argument"`},
		{"wrong content type", "text/plain", `{"id": "sneaky"}`, 415, ""},
		{"oversized", "application/json", huge, 429, `"code":"resource_exhausted"`},
	} {
		status, body := e.post(t, create, tc.ctype, []byte(tc.body))
		if status != tc.status || !strings.Contains(body, tc.code) || strings.Contains(body, "internal") {
			t.Errorf("%s: %d %.200s, want %d %s", tc.name, status, body, tc.status, tc.code)
		}
	}
	status, body := e.post(t, "/coffer.admin.v1.RuleService/PutRules", "application/json", []byte(huge))
	if status != 429 || !strings.Contains(body, "resource_exhausted") {
		t.Errorf("oversized rules: %d %.200s", status, body)
	}
	_, err := e.clients(asAdmin()).buckets.GetBucket(ctx(), req(&adminv1.GetBucketRequest{Id: "sneaky"}))
	wantCode(t, "GetBucket sneaky", err, connect.CodeNotFound)
	status, body = e.post(t, create, "application/json", []byte(`{"id": "fine", "settings": {"public": true}}`))
	if status != 200 || !strings.Contains(body, `"public":true`) {
		t.Errorf("well-formed JSON: %d %s", status, body)
	}
}
