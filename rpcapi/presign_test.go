package rpcapi_test

import (
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"

	adminv1 "github.com/coffer/coffer/proto/gen/coffer/admin/v1"
)

// TestPresignFileExpiry: PresignFile's expires_in_seconds sets the URL's signed
// lifetime (X-Amz-Expires), capped at the bucket's download expiration, and the
// answer says what the URL got; a 2-second URL downloads at once and is refused
// once it has expired.
func TestPresignFileExpiry(t *testing.T) {
	e := newEnv(t)
	c := e.clients(asAdmin())
	_, err := c.buckets.UpdateBucket(ctx(), req(&adminv1.UpdateBucketRequest{Id: "default",
		Settings: &adminv1.BucketSettings{DownloadExpiration: proto.Int64(60)}}))
	check(t, "UpdateBucket", err)
	id := e.upload(asAdmin(), "default", "p.txt", "presigned")
	for _, tc := range []struct{ ask, got int64 }{{0, 60}, {2, 2}, {59, 59}, {3600, 60}, {1 << 62, 60}} {
		res, err := c.files.PresignFile(ctx(), req(&adminv1.PresignFileRequest{Id: id, ExpiresInSeconds: tc.ask}))
		check(t, "PresignFile", err)
		u, err := url.Parse(res.Msg.GetUrl())
		check(t, "the URL", err)
		if res.Msg.GetExpiresInSeconds() != tc.got || u.Query().Get("X-Amz-Expires") != strconv.FormatInt(tc.got, 10) {
			t.Errorf("asked %d s: answered %d s, URL %s; want %d", tc.ask, res.Msg.GetExpiresInSeconds(), u.RawQuery, tc.got)
		}
	}
	_, err = c.files.PresignFile(ctx(), req(&adminv1.PresignFileRequest{Id: id, ExpiresInSeconds: -1}))
	wantCode(t, "a negative lifetime", err, connect.CodeInvalidArgument)

	res, err := c.files.PresignFile(ctx(), req(&adminv1.PresignFileRequest{Id: id, ExpiresInSeconds: 2}))
	check(t, "PresignFile 2 s", err)
	u, _ := url.Parse(res.Msg.GetUrl())
	signed, err := time.Parse("20060102T150405Z", u.Query().Get("X-Amz-Date"))
	check(t, "X-Amz-Date", err)
	if got := fetch(t, res.Msg.GetUrl()); got != "presigned" {
		t.Fatalf("a fresh URL: %q", got)
	}
	time.Sleep(time.Until(signed.Add(2*time.Second + 100*time.Millisecond)))
	resp, err := http.Get(res.Msg.GetUrl())
	check(t, "GET expired", err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), "expired") {
		t.Fatalf("an expired URL: %d %s", resp.StatusCode, b)
	}
}
