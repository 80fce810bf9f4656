package metatest

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/meta"
)

// payloadTests pin the stored event payloads byte for byte: they are kept in the
// outbox and sent as they are, so existing rows must keep decoding and receivers
// must keep getting the same JSON.
var payloadTests = []test{
	{"OutboxPayloadGolden", testPayloadGolden},
}

// storedTime matches a timestamp as time.Time marshals it (RFC 3339, UTC here).
var storedTime = regexp.MustCompile(`"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?Z"`)

// goldenFile is the file of testPayloadGolden; its id is fixed so that payloads are too.
const goldenFile = `{"id":"00000000-0000-4000-8000-0000000901de","bucketId":"default","name":"a.txt","size":3,` +
	`"mimeType":"text/plain","etag":"\"900150983cd24fb0d6963f7d28e17f72\"","isUploaded":true,` +
	`"uploadedByUserId":"user-1","metadata":%s,"createdAt":"<time>","updatedAt":"<time>"}`

func testPayloadGolden(t *testing.T, s meta.Store) {
	o := asOutbox(t, s)
	subscribe(t, o, "")
	ctx := coffer.WithActor(t.Context(), &coffer.Principal{Role: "user", UserID: "u-7"})
	b := coffer.NewBucket("gold")
	b.AllowedMimeTypes, b.Public = []string{"image/*"}, true
	must(t, o.CreateBucket(ctx, b))
	f := newFile(coffer.DefaultBucketID, "a.txt")
	f.ID = "00000000-0000-4000-8000-0000000901de"
	must(t, o.BeginUpload(ctx, f.BlobKey, nil))
	must(t, o.CreateFiles(ctx, []*coffer.File{f}))
	md := json.RawMessage(`{"z":1,"a":"é"}`)
	_, err := o.UpdateFile(coffer.WithActor(t.Context(), &coffer.Principal{Role: "admin"}), f.ID, coffer.FileUpdate{Metadata: &md})
	must(t, err)
	file := func(md string) string { return strings.Replace(goldenFile, "%s", md, 1) }
	head := func(typ, bucket string) string {
		return `{"id":"<event>","type":"` + typ + `","time":"<time>","bucketId":"` + bucket + `",`
	}
	want := []string{
		head("bucket.created", "gold") + `"bucket":{"id":"gold","minUploadFileSize":1,"maxUploadFileSize":50000000,` +
			`"allowedMimeTypes":["image/*"],"cacheControl":"max-age=3600","downloadExpiration":30,` +
			`"presignedUrlsEnabled":true,"public":true,"allowInline":false,"cacheControlShared":false,"createdAt":"<time>","updatedAt":"<time>"},` +
			`"actor":{"role":"user","userId":"u-7"}}`,
		head("file.created", "default") + `"file":` + file(`{"k":"v"}`) + `,"actor":{"role":"user","userId":"u-7"}}`,
		head("file.metadata_updated", "default") + `"file":` + file(`{"z":1,"a":"é"}`) + `,"before":` + file(`{"k":"v"}`) +
			`,"actor":{"role":"admin"}}`,
	}
	cs := claimAll(t, o)
	if len(cs) != len(want) {
		t.Fatalf("%d deliveries, want %d", len(cs), len(want))
	}
	for i, c := range cs {
		got := storedTime.ReplaceAllString(string(c.Payload), `"<time>"`)
		if got = strings.Replace(got, `"id":"`+c.Delivery.EventID+`"`, `"id":"<event>"`, 1); got != want[i] {
			t.Errorf("payload %d:\n got %s\nwant %s", i, got, want[i])
		}
	}
}
