package rpcapi_test

import (
	"fmt"
	"strings"
	"testing"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	adminv1 "github.com/coffer/coffer/proto/gen/coffer/admin/v1"
)

// TestBadInput: the admin's calls with bad arguments, through the generated client,
// one or more per method that takes any: each gets its code (never INTERNAL), and
// the file they aim at is unchanged. Both of Sweep's refusals name its field the
// same way (its JSON name, as every BadRequest detail does).
func TestBadInput(t *testing.T) {
	e := newEnv(t)
	c := e.clients(asAdmin())
	_, err := c.buckets.CreateBucket(ctx(), req(&adminv1.CreateBucketRequest{Id: "docs",
		Settings: &adminv1.BucketSettings{PresignedUrlsEnabled: proto.Bool(false)}}))
	check(t, "CreateBucket", err)
	id := e.upload(asAdmin(), "docs", "x.txt", "x")
	const invalid, notFound = connect.CodeInvalidArgument, connect.CodeNotFound
	f, b, w, o := c.files, c.buckets, c.webhooks, c.ops
	for _, tc := range []struct {
		name string
		code connect.Code
		call func() error
	}{
		{"GetBucket bad id", notFound, func() error { return errOf(b.GetBucket(ctx(), req(&adminv1.GetBucketRequest{Id: "Bad Id!"}))) }},
		{"UpdateBucket bad MIME type", invalid, func() error {
			return errOf(b.UpdateBucket(ctx(), req(&adminv1.UpdateBucketRequest{Id: "docs",
				Settings: &adminv1.BucketSettings{AllowedMimeTypes: &adminv1.MimeTypes{Types: []string{"bad type"}}}})))
		}},
		{"DeleteBucket unknown", notFound, func() error { return errOf(b.DeleteBucket(ctx(), req(&adminv1.DeleteBucketRequest{Id: "nope"}))) }},
		{"GetFile bad id", notFound, func() error { return errOf(f.GetFile(ctx(), req(&adminv1.GetFileRequest{Id: "nope"}))) }},
		{"ListFiles page size", invalid, func() error {
			return errOf(f.ListFiles(ctx(), req(&adminv1.ListFilesRequest{BucketId: "docs", PageSize: 100000})))
		}},
		{"ListFiles negative page size", invalid, func() error {
			return errOf(f.ListFiles(ctx(), req(&adminv1.ListFilesRequest{BucketId: "docs", PageSize: -1})))
		}},
		{"ListFiles bad page token", invalid, func() error {
			return errOf(f.ListFiles(ctx(), req(&adminv1.ListFilesRequest{BucketId: "docs", PageToken: "garbage!!"})))
		}},
		{"ListFiles bad delimiter", invalid, func() error {
			return errOf(f.ListFiles(ctx(), req(&adminv1.ListFilesRequest{BucketId: "docs", Delimiter: "|"})))
		}},
		{"ListFiles unknown bucket", notFound, func() error { return errOf(f.ListFiles(ctx(), req(&adminv1.ListFilesRequest{BucketId: "nope"}))) }},
		{"UpdateFile bad metadata", invalid, func() error {
			return errOf(f.UpdateFile(ctx(), req(&adminv1.UpdateFileRequest{Id: id, MetadataJson: proto.String("[1]")})))
		}},
		{"UpdateFile bad name", invalid, func() error {
			return errOf(f.UpdateFile(ctx(), req(&adminv1.UpdateFileRequest{Id: id, Name: proto.String("../../x")})))
		}},
		{"DeleteFile bad id", notFound, func() error { return errOf(f.DeleteFile(ctx(), req(&adminv1.DeleteFileRequest{Id: "nope"}))) }},
		{"PresignFile, presigning off", connect.CodePermissionDenied, func() error {
			return errOf(f.PresignFile(ctx(), req(&adminv1.PresignFileRequest{Id: id})))
		}},
		{"CreateWebhook bad URL", invalid, func() error { return errOf(w.CreateWebhook(ctx(), req(&adminv1.CreateWebhookRequest{Url: "ftp://x"}))) }},
		{"CreateWebhook bad event", invalid, func() error {
			return errOf(w.CreateWebhook(ctx(), req(&adminv1.CreateWebhookRequest{Url: "http://hooks.test/x", Events: []string{"bogus"}})))
		}},
		{"GetWebhook unknown", notFound, func() error { return errOf(w.GetWebhook(ctx(), req(&adminv1.GetWebhookRequest{Id: "x"}))) }},
		{"DeleteWebhook unknown", notFound, func() error { return errOf(w.DeleteWebhook(ctx(), req(&adminv1.DeleteWebhookRequest{Id: "x"}))) }},
		{"ListDeliveries unknown state", invalid, func() error {
			return errOf(w.ListDeliveries(ctx(), req(&adminv1.ListDeliveriesRequest{WebhookId: "x", State: 99})))
		}},
		{"ListDeliveries negative limit", invalid, func() error {
			return errOf(w.ListDeliveries(ctx(), req(&adminv1.ListDeliveriesRequest{WebhookId: "x", Limit: -5})))
		}},
		{"RedeliverDelivery negative id", notFound, func() error {
			return errOf(w.RedeliverDelivery(ctx(), req(&adminv1.RedeliverDeliveryRequest{WebhookId: "x", DeliveryId: -1})))
		}},
		{"ListVirusRejections negative limit", invalid, func() error {
			return errOf(o.ListVirusRejections(ctx(), req(&adminv1.ListVirusRejectionsRequest{Limit: -1})))
		}},
	} {
		wantCode(t, tc.name, tc.call(), tc.code)
	}
	for _, d := range []*durationpb.Duration{{Seconds: 1e15}, {Seconds: -1}} { // invalid, then negative
		_, err := o.Sweep(ctx(), req(&adminv1.SweepRequest{OlderThan: d}))
		wantField(t, "Sweep older than "+d.String(), err, "olderThan")
	}
	got, err := f.GetFile(ctx(), req(&adminv1.GetFileRequest{Id: id}))
	check(t, "GetFile", err)
	if got.Msg.GetFile().GetName() != "x.txt" || got.Msg.GetFile().GetMetadataJson() != "{}" {
		t.Fatalf("a refused update changed the file: %v", got.Msg)
	}
}

// TestListFilesPageBytes: files with large metadata come in pages of at most 2 MiB
// of names and metadata (so under gRPC's default 4 MiB message limit), shorter than
// the page size asked, and following the page tokens lists each file once.
func TestListFilesPageBytes(t *testing.T) {
	e := newEnv(t)
	c := e.clients(asAdmin())
	md := `{"blob":"` + strings.Repeat("m", 60<<10) + `"}`
	const n = 40 // 2.4 MiB of metadata
	for i := range n {
		id := e.upload(asAdmin(), "default", fmt.Sprintf("f%02d.txt", i), "x")
		_, err := c.files.UpdateFile(ctx(), req(&adminv1.UpdateFileRequest{Id: id, MetadataJson: proto.String(md)}))
		check(t, "UpdateFile", err)
	}
	seen, pages, token := map[string]bool{}, 0, ""
	for pages = 1; ; pages++ {
		res, err := c.files.ListFiles(ctx(), req(&adminv1.ListFilesRequest{BucketId: "default", PageSize: 100, PageToken: token}))
		check(t, "ListFiles", err)
		if size := proto.Size(res.Msg); size > 4<<20 {
			t.Fatalf("page %d is %d bytes", pages, size)
		}
		for _, f := range res.Msg.GetFiles() {
			if seen[f.GetId()] {
				t.Fatalf("%s listed twice", f.GetName())
			}
			seen[f.GetId()] = true
		}
		if token = res.Msg.GetNextPageToken(); token == "" {
			break
		}
	}
	if len(seen) != n || pages < 2 {
		t.Fatalf("%d files in %d pages, want %d in 2 or more", len(seen), pages, n)
	}
}
