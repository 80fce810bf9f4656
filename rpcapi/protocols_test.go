package rpcapi_test

import (
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"connectrpc.com/connect"
	"connectrpc.com/grpchealth"
	"connectrpc.com/grpcreflect"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/descriptorpb"

	adminv1 "github.com/coffer/coffer/proto/gen/coffer/admin/v1"
	"github.com/coffer/coffer/proto/gen/coffer/admin/v1/adminv1connect"
	reflectionv1 "github.com/coffer/coffer/proto/gen/grpc/reflection/v1"
)

// TestProtocols: the same call over gRPC (HTTP/2 without TLS, as --h2c serves it),
// gRPC-Web and the Connect protocol with JSON, and a refusal over gRPC.
func TestProtocols(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		name string
		c    clients
	}{
		{"grpc over h2c", e.clients(h2cClient("X-Hasura-Admin-Secret", adminSecret), connect.WithGRPC())},
		{"grpc-web", e.clients(asAdmin(), connect.WithGRPCWeb())},
		{"connect json", e.clients(asAdmin(), connect.WithProtoJSON())},
		{"connect json over h2c", e.clients(h2cClient("X-Hasura-Admin-Secret", adminSecret), connect.WithProtoJSON())},
	} {
		list, err := tc.c.buckets.ListBuckets(ctx(), req(&adminv1.ListBucketsRequest{}))
		check(t, tc.name+" ListBuckets", err)
		if len(list.Msg.GetBuckets()) != 1 || list.Msg.GetBuckets()[0].GetId() != "default" {
			t.Fatalf("%s: %v", tc.name, list.Msg)
		}
	}
	_, err := e.clients(h2cClient(), connect.WithGRPC()).buckets.ListBuckets(ctx(), req(&adminv1.ListBucketsRequest{}))
	wantCode(t, "anonymous over grpc", err, connect.CodeUnauthenticated)
	_, err = e.clients(h2cClient("X-Hasura-Admin-Secret", adminSecret), connect.WithGRPC()).buckets.CreateBucket(ctx(),
		req(&adminv1.CreateBucketRequest{Id: "Bad Id"}))
	wantCode(t, "bad id over grpc", err, connect.CodeInvalidArgument)
}

// TestReflectionAndHealth: server reflection over gRPC (what grpcurl list does)
// names the contract's services and health; the health service says SERVING.
func TestReflectionAndHealth(t *testing.T) {
	e := newEnv(t)
	rc := grpcreflect.NewClient(h2cClient(), e.base, connect.WithGRPC())
	stream := rc.NewStream(ctx())
	names, err := stream.ListServices()
	check(t, "ListServices", err)
	_, _ = stream.Close()
	for _, want := range []string{adminv1connect.BucketServiceName, adminv1connect.FileServiceName, adminv1connect.RuleServiceName,
		adminv1connect.WebhookServiceName, adminv1connect.OpsServiceName, adminv1connect.ServerServiceName,
		adminv1connect.TenantServiceName, adminv1connect.SiteServiceName, adminv1connect.AuditServiceName,
		grpchealth.HealthV1ServiceName} {
		found := false
		for _, n := range names {
			found = found || string(n) == want
		}
		if !found {
			t.Errorf("reflection lists %v, without %s", names, want)
		}
	}
	stream = rc.NewStream(ctx())
	files, err := stream.FileContainingSymbol(adminv1connect.BucketServiceName)
	check(t, "FileContainingSymbol", err)
	_, _ = stream.Close()
	if !slices.ContainsFunc(files, func(f *descriptorpb.FileDescriptorProto) bool { return f.GetName() == "coffer/admin/v1/buckets.proto" }) {
		t.Errorf("reflection's files for BucketService: %d, none buckets.proto", len(files))
	}
	stream = rc.NewStream(ctx())
	files, err = stream.FileContainingSymbol(grpchealth.HealthV1ServiceName)
	check(t, "FileContainingSymbol health", err)
	if len(files) == 0 || files[0].GetName() != "grpc/health/v1/health.proto" || files[0].GetPackage() != "grpc.health.v1" {
		t.Errorf("reflection's file for health: %v", files)
	}
	if _, err := stream.FileByFilename("imagerpc.proto"); err == nil {
		t.Error("reflection discloses the image worker's protocol, which the face does not serve")
	}
	_, _ = stream.Close()
	testReflectionV1Alpha(t, e)
	hc := grpchealth.NewClient(h2cClient(), e.base, connect.WithGRPC())
	for _, svc := range []string{"", adminv1connect.FileServiceName} {
		res, err := hc.Check(ctx(), &grpchealth.CheckRequest{Service: svc})
		check(t, "health "+svc, err)
		if res.Status != grpchealth.StatusServing {
			t.Errorf("health %q: %v", svc, res.Status)
		}
	}
	_, err = hc.Check(ctx(), &grpchealth.CheckRequest{Service: "no.such.Service"})
	wantCode(t, "health of an unknown service", err, connect.CodeNotFound)
}

// TestConnectJSONWithCurlShape: a plain POST of JSON (what docs/management.md's curl sends)
// answers JSON in the contract's field names.
func TestConnectJSONWithCurlShape(t *testing.T) {
	e := newEnv(t)
	status, body := e.post(t, "/coffer.admin.v1.BucketService/GetBucket", "application/json", []byte(`{"id":"default"}`))
	var got adminv1.GetBucketResponse
	if status != 200 || protojson.Unmarshal([]byte(body), &got) != nil || got.GetBucket().GetDownloadExpiration() != 30 {
		t.Fatalf("%d %s", status, body)
	}
}

// TestFrame: calls go through the shared httpserve.Frame: a request id on every
// answer, and the metrics count them by service (the route is the service's prefix).
func TestFrame(t *testing.T) {
	e := newEnv(t)
	_, err := e.clients(asAdmin()).buckets.ListBuckets(ctx(), req(&adminv1.ListBucketsRequest{}))
	check(t, "ListBuckets", err)
	r, _ := http.NewRequest("POST", e.base+"/coffer.admin.v1.ServerService/GetVersion", strings.NewReader("{}"))
	r.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(r)
	check(t, "GetVersion", err)
	resp.Body.Close()
	if resp.Header.Get("X-Request-Id") == "" {
		t.Error("no X-Request-Id")
	}
	r, _ = http.NewRequest("GET", e.base+"/metrics", nil)
	r.Header.Set("X-Hasura-Admin-Secret", adminSecret)
	resp, err = http.DefaultClient.Do(r)
	check(t, "GET /metrics", err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(b), `route="/coffer.admin.v1.BucketService/"`) {
		t.Errorf("metrics have no BucketService route:\n%.2000s", b)
	}
}

// testReflectionV1Alpha lists the services over reflection v1alpha, which older
// clients ask (the v1 messages on the wire).
func testReflectionV1Alpha(t *testing.T, e *env) {
	c := connect.NewClient[reflectionv1.ServerReflectionRequest, reflectionv1.ServerReflectionResponse](h2cClient(),
		e.base+"/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo", connect.WithGRPC())
	stream := c.CallBidiStream(ctx())
	check(t, "v1alpha send", stream.Send(&reflectionv1.ServerReflectionRequest{
		MessageRequest: &reflectionv1.ServerReflectionRequest_ListServices{ListServices: "*"}}))
	check(t, "v1alpha close send", stream.CloseRequest())
	res, err := stream.Receive()
	check(t, "v1alpha receive", err)
	_ = stream.CloseResponse()
	if n := len(res.GetListServicesResponse().GetService()); n < 7 {
		t.Errorf("v1alpha lists %d services: %v", n, res)
	}
}
