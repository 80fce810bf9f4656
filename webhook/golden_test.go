package webhook

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coffer/coffer"
)

// TestGoldenPayload pins the body a receiver gets, byte for byte (times, which vary,
// replaced by <time>, and the event id, which the Coffer-Event-Id header names, by
// <event>).
func TestGoldenPayload(t *testing.T) {
	s := openSQLite(t)
	var mu sync.Mutex
	var bodies []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		bodies = append(bodies, strings.Replace(string(body), `"id":"`+r.Header.Get("Coffer-Event-Id")+`"`, `"id":"<event>"`, 1))
	}))
	t.Cleanup(srv.Close)
	sub := subscribeTo(t, s, srv.URL, "", coffer.FileCreated)
	startDispatcher(t, s, fastConfig(), loopbackClient(2*time.Second))
	ctx := coffer.WithActor(t.Context(), &coffer.Principal{Role: "user", UserID: "alice"})
	f := &coffer.File{ID: "00000000-0000-4000-8000-00000000901d", BucketID: coffer.DefaultBucketID, Name: "dir/a b.txt",
		Size: 11, MimeType: "text/plain; charset=utf-8", ETag: `"5eb63bbbe01eeed093cb22bb8f5acdc3"`,
		UploadedByUserID: "alice", BlobKey: "k/golden", Metadata: json.RawMessage(`{"b":[1,2],"a":null}`)}
	if err := s.BeginUpload(ctx, f.BlobKey, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateFiles(ctx, []*coffer.File{f}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the delivery", func() bool { return allIn(deliveries(t, s, sub.ID), coffer.DeliveryDelivered) })
	want := `{"id":"<event>","type":"file.created","time":"<time>","bucketId":"default","file":{` +
		`"id":"00000000-0000-4000-8000-00000000901d","bucketId":"default","name":"dir/a b.txt","size":11,` +
		`"mimeType":"text/plain; charset=utf-8","etag":"\"5eb63bbbe01eeed093cb22bb8f5acdc3\"","isUploaded":true,` +
		`"uploadedByUserId":"alice","metadata":{"b":[1,2],"a":null},"createdAt":"<time>","updatedAt":"<time>"},` +
		`"actor":{"role":"user","userId":"alice"}}`
	times := regexp.MustCompile(`"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?Z"`)
	mu.Lock()
	defer mu.Unlock()
	if len(bodies) != 1 || times.ReplaceAllString(bodies[0], `"<time>"`) != want {
		t.Fatalf("bodies %q\nwant %s", bodies, want)
	}
}
