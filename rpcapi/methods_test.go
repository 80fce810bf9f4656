package rpcapi_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/coffer/coffer/app"
	adminv1 "github.com/coffer/coffer/proto/gen/coffer/admin/v1"
	"github.com/coffer/coffer/webhook"
)

// req wraps a message in a Connect request.
func req[T any](m *T) *connect.Request[T] { return connect.NewRequest(m) }

// TestBucketsAndFiles drives BucketService and FileService through the generated
// client (Connect protocol, binary protobuf) as the admin.
func TestBucketsAndFiles(t *testing.T) {
	e := newEnv(t)
	c := e.clients(asAdmin())
	created, err := c.buckets.CreateBucket(ctx(), req(&adminv1.CreateBucketRequest{Id: "docs",
		Settings: &adminv1.BucketSettings{Public: proto.Bool(false), AllowedMimeTypes: &adminv1.MimeTypes{Types: []string{"text/*"}}}}))
	check(t, "CreateBucket", err)
	if b := created.Msg.GetBucket(); b.GetId() != "docs" || b.GetDownloadExpiration() != 30 || len(b.GetAllowedMimeTypes()) != 1 {
		t.Fatalf("created %v", b)
	}
	_, err = c.buckets.CreateBucket(ctx(), req(&adminv1.CreateBucketRequest{Id: "docs"}))
	wantCode(t, "CreateBucket twice", err, connect.CodeAlreadyExists)
	up, err := c.buckets.UpdateBucket(ctx(), req(&adminv1.UpdateBucketRequest{Id: "docs",
		Settings: &adminv1.BucketSettings{DownloadExpiration: proto.Int64(60), CacheControlShared: proto.Bool(true)}}))
	check(t, "UpdateBucket", err)
	if b := up.Msg.GetBucket(); b.GetDownloadExpiration() != 60 || len(b.GetAllowedMimeTypes()) != 1 || !b.GetCacheControlShared() {
		t.Fatalf("updated %v (unset settings must stay)", b)
	}
	got, err := c.buckets.GetBucket(ctx(), req(&adminv1.GetBucketRequest{Id: "docs"}))
	check(t, "GetBucket", err)
	if got.Msg.GetBucket().GetDownloadExpiration() != 60 || !got.Msg.GetBucket().GetCacheControlShared() {
		t.Fatalf("got %v", got.Msg)
	}
	list, err := c.buckets.ListBuckets(ctx(), req(&adminv1.ListBucketsRequest{}))
	check(t, "ListBuckets", err)
	if len(list.Msg.GetBuckets()) != 2 { // default and docs
		t.Fatalf("listed %v", list.Msg)
	}
	testFiles(t, e, c)
	_, err = c.buckets.DeleteBucket(ctx(), req(&adminv1.DeleteBucketRequest{Id: "docs"}))
	check(t, "DeleteBucket", err)
	_, err = c.buckets.GetBucket(ctx(), req(&adminv1.GetBucketRequest{Id: "docs"}))
	wantCode(t, "GetBucket deleted", err, connect.CodeNotFound)
}

// testFiles drives FileService over bucket docs, leaving it empty.
func testFiles(t *testing.T, e *env, c clients) {
	a, b := e.upload(asAdmin(), "docs", "a/one.txt", "one"), e.upload(asAdmin(), "docs", "a/two.txt", "two")
	e.upload(asAdmin(), "docs", "b/three.txt", "three")
	page, err := c.files.ListFiles(ctx(), req(&adminv1.ListFilesRequest{BucketId: "docs", Prefix: "a/", PageSize: 1}))
	check(t, "ListFiles", err)
	if fs := page.Msg.GetFiles(); len(fs) != 1 || fs[0].GetId() != a || page.Msg.GetNextPageToken() == "" {
		t.Fatalf("first page %v", page.Msg)
	}
	page, err = c.files.ListFiles(ctx(), req(&adminv1.ListFilesRequest{BucketId: "docs", Prefix: "a/", PageSize: 1, PageToken: page.Msg.GetNextPageToken()}))
	check(t, "ListFiles page 2", err)
	if fs := page.Msg.GetFiles(); len(fs) != 1 || fs[0].GetId() != b {
		t.Fatalf("second page %v", page.Msg)
	}
	f, err := c.files.GetFile(ctx(), req(&adminv1.GetFileRequest{Id: a}))
	check(t, "GetFile", err)
	if f.Msg.GetFile().GetSize() != 3 || f.Msg.GetFile().GetName() != "a/one.txt" || f.Msg.GetFile().GetMetadataJson() != "{}" {
		t.Fatalf("file %v", f.Msg)
	}
	upd, err := c.files.UpdateFile(ctx(), req(&adminv1.UpdateFileRequest{Id: a, Name: proto.String("a/uno.txt"), MetadataJson: proto.String(`{"k":"v"}`)}))
	check(t, "UpdateFile", err)
	if upd.Msg.GetFile().GetName() != "a/uno.txt" || upd.Msg.GetFile().GetMetadataJson() != `{"k":"v"}` {
		t.Fatalf("updated %v", upd.Msg)
	}
	ps, err := c.files.PresignFile(ctx(), req(&adminv1.PresignFileRequest{Id: a}))
	check(t, "PresignFile", err)
	if ps.Msg.GetExpiresInSeconds() != 60 || fetch(t, ps.Msg.GetUrl()) != "one" {
		t.Fatalf("presigned %v", ps.Msg)
	}
	for _, id := range []string{a, b} {
		_, err = c.files.DeleteFile(ctx(), req(&adminv1.DeleteFileRequest{Id: id}))
		check(t, "DeleteFile", err)
	}
	_, err = c.files.GetFile(ctx(), req(&adminv1.GetFileRequest{Id: a}))
	wantCode(t, "GetFile deleted", err, connect.CodeNotFound)
	page, err = c.files.ListFiles(ctx(), req(&adminv1.ListFilesRequest{BucketId: "docs"}))
	check(t, "ListFiles all", err)
	for _, f := range page.Msg.GetFiles() {
		_, err = c.files.DeleteFile(ctx(), req(&adminv1.DeleteFileRequest{Id: f.GetId()}))
		check(t, "DeleteFile rest", err)
	}
}

// fetch GETs url without credentials and returns the body (fails unless 200).
func fetch(t *testing.T, url string) string {
	resp, err := http.Get(url)
	check(t, "GET "+url, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, b)
	}
	return string(b)
}

// TestRulesWebhooksOpsServer drives RuleService, WebhookService, OpsService and
// ServerService as the admin.
func TestRulesWebhooksOpsServer(t *testing.T) {
	e := newEnv(t)
	c := e.clients(asAdmin())
	v, err := c.rules.ValidateRules(ctx(), req(&adminv1.ValidateRulesRequest{Document: testRules}))
	check(t, "ValidateRules", err)
	put, err := c.rules.PutRules(ctx(), req(&adminv1.PutRulesRequest{Document: testRules}))
	check(t, "PutRules", err)
	got, err := c.rules.GetRules(ctx(), req(&adminv1.GetRulesRequest{}))
	check(t, "GetRules", err)
	if got.Msg.GetDocument() != put.Msg.GetDocument() || v.Msg.GetDocument() != put.Msg.GetDocument() {
		t.Fatalf("validated %s, put %s, got %s", v.Msg.GetDocument(), put.Msg.GetDocument(), got.Msg.GetDocument())
	}
	testWebhooks(t, c)
	testOps(t, c)
	ver, err := c.server.GetVersion(ctx(), req(&adminv1.GetVersionRequest{}))
	check(t, "GetVersion", err)
	cs, err := c.server.GetCacheStats(ctx(), req(&adminv1.GetCacheStatsRequest{}))
	check(t, "GetCacheStats", err)
	iw, err := c.server.GetImageWorkers(ctx(), req(&adminv1.GetImageWorkersRequest{}))
	check(t, "GetImageWorkers", err)
	if ver.Msg.GetVersion() != "test" || len(cs.Msg.GetCaches()) == 0 || iw.Msg.GetWorkers() < 1 {
		t.Fatalf("version %v, caches %v, image workers %v", ver.Msg, cs.Msg, iw.Msg)
	}
}

// testWebhooks makes, lists, reads and deletes a subscription.
func testWebhooks(t *testing.T, c clients) {
	mk, err := c.webhooks.CreateWebhook(ctx(), req(&adminv1.CreateWebhookRequest{Url: "http://hooks.test:9/in",
		Events: []string{"file.created"}}))
	check(t, "CreateWebhook", err)
	id := mk.Msg.GetWebhook().GetId()
	if id == "" || mk.Msg.GetWebhook().GetSecret() == "" {
		t.Fatalf("created %v", mk.Msg)
	}
	list, err := c.webhooks.ListWebhooks(ctx(), req(&adminv1.ListWebhooksRequest{}))
	check(t, "ListWebhooks", err)
	got, err := c.webhooks.GetWebhook(ctx(), req(&adminv1.GetWebhookRequest{Id: id}))
	check(t, "GetWebhook", err)
	if len(list.Msg.GetWebhooks()) != 1 || list.Msg.GetWebhooks()[0].GetSecret() != "" || got.Msg.GetWebhook().GetSecret() != "" ||
		got.Msg.GetWebhook().GetUrl() != "http://hooks.test:9/in" { // the secret is shown once, when made
		t.Fatalf("listed %v, got %v", list.Msg, got.Msg)
	}
	ds, err := c.webhooks.ListDeliveries(ctx(), req(&adminv1.ListDeliveriesRequest{WebhookId: id, State: adminv1.DeliveryState_DELIVERY_STATE_DEAD}))
	check(t, "ListDeliveries", err)
	if len(ds.Msg.GetDeliveries()) != 0 {
		t.Fatalf("deliveries %v", ds.Msg)
	}
	_, err = c.webhooks.RedeliverDelivery(ctx(), req(&adminv1.RedeliverDeliveryRequest{WebhookId: id, DeliveryId: 12345}))
	wantCode(t, "RedeliverDelivery of none", err, connect.CodeNotFound)
	_, err = c.webhooks.DeleteWebhook(ctx(), req(&adminv1.DeleteWebhookRequest{Id: id}))
	check(t, "DeleteWebhook", err)
	_, err = c.webhooks.GetWebhook(ctx(), req(&adminv1.GetWebhookRequest{Id: id}))
	wantCode(t, "GetWebhook deleted", err, connect.CodeNotFound)
}

// testOps runs every maintenance call on a clean server: they find nothing.
func testOps(t *testing.T, c clients) {
	_, err := c.ops.ListOrphans(ctx(), req(&adminv1.ListOrphansRequest{}))
	check(t, "ListOrphans", err)
	_, err = c.ops.DeleteOrphans(ctx(), req(&adminv1.DeleteOrphansRequest{}))
	check(t, "DeleteOrphans", err)
	_, err = c.ops.ListBrokenMetadata(ctx(), req(&adminv1.ListBrokenMetadataRequest{}))
	check(t, "ListBrokenMetadata", err)
	_, err = c.ops.DeleteBrokenMetadata(ctx(), req(&adminv1.DeleteBrokenMetadataRequest{}))
	check(t, "DeleteBrokenMetadata", err)
	_, err = c.ops.ListNotUploaded(ctx(), req(&adminv1.ListNotUploadedRequest{}))
	check(t, "ListNotUploaded", err)
	_, err = c.ops.Sweep(ctx(), req(&adminv1.SweepRequest{OlderThan: durationpb.New(3600e9)}))
	check(t, "Sweep", err)
	_, err = c.ops.Sweep(ctx(), req(&adminv1.SweepRequest{OlderThan: durationpb.New(-1e9)}))
	wantCode(t, "Sweep negative", err, connect.CodeInvalidArgument)
	_, err = c.ops.ListVirusRejections(ctx(), req(&adminv1.ListVirusRejectionsRequest{}))
	check(t, "ListVirusRejections", err)
	_, err = c.ops.ListVirusRejections(ctx(), req(&adminv1.ListVirusRejectionsRequest{Limit: 5000}))
	wantCode(t, "ListVirusRejections limit 5000", err, connect.CodeInvalidArgument)
}

// TestDeadDeliveryRedelivered: a webhook whose receiver fails ends dead,
// ListDeliveries finds it by state, and once the receiver answers again,
// RedeliverDelivery gets it delivered.
func TestDeadDeliveryRedelivered(t *testing.T) {
	e := newEnv(t, func(c *app.Config, p *app.Parts) {
		c.Webhooks.MaxAttempts, c.Webhooks.Timeout = 2, 2*time.Second
		p.Webhooks = func(w *webhook.Config) {
			w.BackoffBase, w.BackoffMax, w.Poll = 5*time.Millisecond, 20*time.Millisecond, 20*time.Millisecond
		}
	})
	var up atomic.Bool // the receiver answers 204 once set, 500 before
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(map[bool]int{false: 500, true: 204}[up.Load()])
	}))
	t.Cleanup(rcv.Close)
	c := e.clients(asAdmin())
	mk, err := c.webhooks.CreateWebhook(ctx(), req(&adminv1.CreateWebhookRequest{Url: rcv.URL, Events: []string{"file.created"}}))
	check(t, "CreateWebhook", err)
	id := mk.Msg.GetWebhook().GetId()
	e.upload(asAdmin(), "default", "x.txt", "x")
	dead := listUntil(t, c, id, adminv1.DeliveryState_DELIVERY_STATE_DEAD)
	if d := dead[0]; d.GetAttempts() != 2 || d.GetLastStatus() != 500 || d.GetEventType() != "file.created" {
		t.Fatalf("dead delivery %v", d)
	}
	up.Store(true)
	_, err = c.webhooks.RedeliverDelivery(ctx(), req(&adminv1.RedeliverDeliveryRequest{WebhookId: id, DeliveryId: dead[0].GetId()}))
	check(t, "RedeliverDelivery", err)
	if d := listUntil(t, c, id, adminv1.DeliveryState_DELIVERY_STATE_DELIVERED); d[0].GetId() != dead[0].GetId() {
		t.Fatalf("delivered %v, want delivery %d", d, dead[0].GetId())
	}
}

// listUntil polls a webhook's deliveries in state until there is one.
func listUntil(t *testing.T, c clients, id string, state adminv1.DeliveryState) []*adminv1.Delivery {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		res, err := c.webhooks.ListDeliveries(ctx(), req(&adminv1.ListDeliveriesRequest{WebhookId: id, State: state}))
		check(t, "ListDeliveries", err)
		if ds := res.Msg.GetDeliveries(); len(ds) > 0 {
			return ds
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no delivery in state %v", state)
	return nil
}
