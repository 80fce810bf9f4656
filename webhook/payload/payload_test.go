package payload

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/coffer/coffer"
)

// TestEncodeGolden pins the body of one event of each shape, times included, and
// checks that Decode gives back the event (but the blob key, which is never sent).
func TestEncodeGolden(t *testing.T) {
	at := time.Date(2026, 11, 24, 21, 5, 6, 789000000, time.UTC)
	f := &coffer.File{ID: "f1", BucketID: "b", Name: "a.txt", Size: 3, MimeType: "text/plain", ETag: `"e"`,
		IsUploaded: true, Metadata: json.RawMessage(`{"k":1}`), CreatedAt: at, UpdatedAt: at.Add(time.Second), BlobKey: "secret/key"}
	b := &coffer.Bucket{ID: "b", MinUploadFileSize: 1, MaxUploadFileSize: 2, CacheControl: "no-store",
		DownloadExpiration: 30, PresignedURLsEnabled: true, CreatedAt: at, UpdatedAt: at}
	r := &coffer.Rejection{ID: "r1", Time: at, BucketID: "b", Name: "x.com", Role: "public", Signature: "S", Size: 68}
	fileJSON := `{"id":"f1","bucketId":"b","name":"a.txt","size":3,"mimeType":"text/plain","etag":"\"e\"","isUploaded":true,` +
		`"uploadedByUserId":"","metadata":{"k":1},"createdAt":"2026-11-24T21:05:06.789Z","updatedAt":"2026-11-24T21:05:07.789Z"}`
	for _, c := range []struct {
		ev   coffer.Event
		want string
	}{
		{coffer.Event{ID: "e1", Type: coffer.FileReplaced, Time: at, BucketID: "b", File: f, Before: f,
			Actor: coffer.Actor{Role: "user", UserID: "u"}},
			`{"id":"e1","type":"file.replaced","time":"2026-11-24T21:05:06.789Z","bucketId":"b","file":` + fileJSON +
				`,"before":` + fileJSON + `,"actor":{"role":"user","userId":"u"}}`},
		{coffer.Event{ID: "e2", Type: coffer.BucketCreated, Time: at, BucketID: "b", Bucket: b, Actor: coffer.SystemActor},
			`{"id":"e2","type":"bucket.created","time":"2026-11-24T21:05:06.789Z","bucketId":"b","bucket":{"id":"b",` +
				`"minUploadFileSize":1,"maxUploadFileSize":2,"allowedMimeTypes":null,"cacheControl":"no-store","downloadExpiration":30,` +
				`"presignedUrlsEnabled":true,"public":false,"allowInline":false,"cacheControlShared":false,"createdAt":"2026-11-24T21:05:06.789Z",` +
				`"updatedAt":"2026-11-24T21:05:06.789Z"},"actor":{"role":"system"}}`},
		{coffer.Event{ID: "e3", Type: coffer.FileRejected, Time: at, BucketID: "b", Rejection: r, Actor: coffer.Actor{Role: "public"}},
			`{"id":"e3","type":"file.rejected","time":"2026-11-24T21:05:06.789Z","bucketId":"b","rejection":{"id":"r1",` +
				`"time":"2026-11-24T21:05:06.789Z","bucketId":"b","name":"x.com","role":"public","signature":"S","size":68},` +
				`"actor":{"role":"public"}}`},
	} {
		got, err := Encode(&c.ev)
		if err != nil || string(got) != c.want {
			t.Fatalf("Encode(%s) = %s, %v\nwant %s", c.ev.Type, got, err, c.want)
		}
		back, err := Decode(got)
		want := c.ev
		if want.File != nil {
			nf := *f
			nf.BlobKey = ""
			want.File, want.Before = &nf, &nf
		}
		if err != nil || !reflect.DeepEqual(*back, want) {
			t.Fatalf("Decode(%s) = %+v, %v\nwant %+v", got, back, err, want)
		}
	}
}
