package rpcapi_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"connectrpc.com/connect"

	adminv1 "github.com/coffer/coffer/proto/gen/coffer/admin/v1"
	"github.com/coffer/coffer/proto/gen/coffer/admin/v1/adminv1connect"
)

// TestServerTiming: every RPC answer carries Server-Timing with the server's time
// (app), in each protocol, errors included; a listing adds its metadata time (meta),
// so that a browser can tell the server's share of a call.
func TestServerTiming(t *testing.T) {
	e := newEnv(t)
	admin := asAdmin()
	header := func(h http.Header, err error) http.Header {
		var ce *connect.Error
		if errors.As(err, &ce) {
			return ce.Meta()
		}
		return h
	}
	for _, tc := range []struct {
		name string
		call func() http.Header
		want []string
	}{
		{"connect JSON", func() http.Header {
			r, err := adminv1connect.NewServerServiceClient(admin, e.base, connect.WithProtoJSON()).GetVersion(ctx(), req(&adminv1.GetVersionRequest{}))
			return header(r.Header(), err)
		}, []string{"app;dur="}},
		{"connect proto listing", func() http.Header {
			r, err := adminv1connect.NewFileServiceClient(admin, e.base).ListFiles(ctx(), req(&adminv1.ListFilesRequest{BucketId: "default"}))
			return header(r.Header(), err)
		}, []string{"meta;dur=", "app;dur="}},
		{"gRPC", func() http.Header {
			r, err := adminv1connect.NewBucketServiceClient(h2cClient("X-Hasura-Admin-Secret", adminSecret), e.base, connect.WithGRPC()).
				GetBucket(ctx(), req(&adminv1.GetBucketRequest{Id: "default"}))
			return header(r.Header(), err)
		}, []string{"app;dur="}},
		{"gRPC-Web", func() http.Header {
			r, err := adminv1connect.NewBucketServiceClient(admin, e.base, connect.WithGRPCWeb()).GetBucket(ctx(), req(&adminv1.GetBucketRequest{Id: "default"}))
			return header(r.Header(), err)
		}, []string{"app;dur="}},
		{"an error", func() http.Header {
			_, err := adminv1connect.NewBucketServiceClient(anonymous(), e.base).GetBucket(ctx(), req(&adminv1.GetBucketRequest{Id: "default"}))
			if err == nil {
				t.Fatal("an anonymous GetBucket succeeded")
			}
			return header(nil, err)
		}, []string{"app;dur="}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := tc.call().Get("Server-Timing")
			for _, w := range tc.want {
				if !strings.Contains(st, w) {
					t.Errorf("Server-Timing %q lacks %q", st, w)
				}
			}
		})
	}
}
