package rpcapi_test

import (
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	rpbalpha "google.golang.org/grpc/reflection/grpc_reflection_v1alpha"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"

	rpb "github.com/coffer/coffer/proto/gen/grpc/reflection/v1"
)

// grpcConn dials the env with grpc-go over h2c (passthrough: no resolver).
func grpcConn(t *testing.T, e *env) *grpc.ClientConn {
	conn, err := grpc.NewClient("passthrough:///"+strings.TrimPrefix(e.base, "http://"),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	check(t, "grpc.NewClient", err)
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

// TestGRPCGoReflectionClient does what grpcurl does, over grpc-go's transport and
// with no generated code of the contract: list the services (v1, and v1alpha with
// grpc-go's own client), build the contract's file descriptors from reflection
// alone, and call GetBucket with a dynamic message made from JSON. (v1 goes through
// a grpc-go stream with coffer's reflection messages: grpc-go's v1 package registers
// the same .proto file, and one binary cannot hold both.)
func TestGRPCGoReflectionClient(t *testing.T) {
	e := newEnv(t)
	conn := grpcConn(t, e)
	stream, err := conn.NewStream(ctx(), &grpc.StreamDesc{ClientStreams: true, ServerStreams: true},
		"/grpc.reflection.v1.ServerReflection/ServerReflectionInfo")
	check(t, "ServerReflectionInfo", err)
	res := reflect(t, stream, &rpb.ServerReflectionRequest{MessageRequest: &rpb.ServerReflectionRequest_ListServices{}})
	if n := len(res.GetListServicesResponse().GetService()); n < 8 {
		t.Fatalf("v1 lists %d services: %v", n, res)
	}
	files := &protoregistry.Files{}
	res = reflect(t, stream, &rpb.ServerReflectionRequest{MessageRequest: &rpb.ServerReflectionRequest_FileContainingSymbol{
		FileContainingSymbol: "coffer.admin.v1.BucketService"}})
	addFiles(t, files, res.GetFileDescriptorResponse().GetFileDescriptorProto())
	d, err := files.FindDescriptorByName("coffer.admin.v1.BucketService")
	check(t, "find BucketService", err)
	callGetBucket(t, conn, d.(protoreflect.ServiceDescriptor).Methods().ByName("GetBucket"))
	testBadReflectionRequests(t, stream)
	alpha, err := rpbalpha.NewServerReflectionClient(conn).ServerReflectionInfo(ctx())
	check(t, "v1alpha ServerReflectionInfo", err)
	check(t, "v1alpha send", alpha.Send(&rpbalpha.ServerReflectionRequest{MessageRequest: &rpbalpha.ServerReflectionRequest_ListServices{}}))
	ares, err := alpha.Recv()
	check(t, "v1alpha receive", err)
	if n := len(ares.GetListServicesResponse().GetService()); n < 8 {
		t.Fatalf("v1alpha lists %d services", n)
	}
}

// testBadReflectionRequests sends reflection requests that name nothing or nothing
// known: each is an error answer (NOT_FOUND) on a stream that keeps answering.
func testBadReflectionRequests(t *testing.T, stream grpc.ClientStream) {
	for name, r := range map[string]*rpb.ServerReflectionRequest{
		"no request":       {},
		"unknown file":     {MessageRequest: &rpb.ServerReflectionRequest_FileByFilename{FileByFilename: "../../etc/passwd"}},
		"empty symbol":     {MessageRequest: &rpb.ServerReflectionRequest_FileContainingSymbol{}},
		"unknown symbol":   {MessageRequest: &rpb.ServerReflectionRequest_FileContainingSymbol{FileContainingSymbol: "coffer.admin.v1."}},
		"extension":        {MessageRequest: &rpb.ServerReflectionRequest_FileContainingExtension{FileContainingExtension: &rpb.ExtensionRequest{}}},
		"extension number": {MessageRequest: &rpb.ServerReflectionRequest_AllExtensionNumbersOfType{AllExtensionNumbersOfType: "x"}},
	} {
		if code := reflect(t, stream, r).GetErrorResponse().GetErrorCode(); code != 5 {
			t.Errorf("reflection of %s: error code %d, want 5 (NOT_FOUND)", name, code)
		}
	}
	if res := reflect(t, stream, &rpb.ServerReflectionRequest{MessageRequest: &rpb.ServerReflectionRequest_ListServices{}}); res.GetListServicesResponse() == nil {
		t.Errorf("the stream stopped answering after bad requests: %v", res)
	}
}

// reflect sends one reflection request on stream and returns its answer.
func reflect(t *testing.T, stream grpc.ClientStream, r *rpb.ServerReflectionRequest) *rpb.ServerReflectionResponse {
	t.Helper()
	check(t, "reflection send", stream.SendMsg(r))
	res := &rpb.ServerReflectionResponse{}
	check(t, "reflection receive", stream.RecvMsg(res))
	return res
}

// addFiles registers the serialized FileDescriptorProtos of one reflection answer,
// each after its imports (the answer lists a file before them, as grpc-go's does).
func addFiles(t *testing.T, files *protoregistry.Files, raws [][]byte) {
	t.Helper()
	byName := map[string]*descriptorpb.FileDescriptorProto{}
	for _, raw := range raws {
		fdp := &descriptorpb.FileDescriptorProto{}
		check(t, "unmarshal file descriptor", proto.Unmarshal(raw, fdp))
		byName[fdp.GetName()] = fdp
	}
	var add func(name string)
	add = func(name string) {
		if _, err := files.FindFileByPath(name); err == nil || byName[name] == nil {
			return
		}
		for _, dep := range byName[name].GetDependency() {
			add(dep)
		}
		fd, err := protodesc.NewFile(byName[name], files)
		check(t, "file "+name+" from reflection", err)
		check(t, "register "+name, files.RegisterFile(fd))
	}
	for name := range byName {
		add(name)
	}
}

// callGetBucket calls m with {"id":"default"} as the admin, as grpcurl -d does.
func callGetBucket(t *testing.T, conn *grpc.ClientConn, m protoreflect.MethodDescriptor) {
	in, out := dynamicpb.NewMessage(m.Input()), dynamicpb.NewMessage(m.Output())
	check(t, "request from JSON", protojson.Unmarshal([]byte(`{"id":"default"}`), in))
	c := metadata.AppendToOutgoingContext(ctx(), "x-hasura-admin-secret", adminSecret)
	check(t, "GetBucket over grpc-go", conn.Invoke(c, "/coffer.admin.v1.BucketService/GetBucket", in, out))
	b, _ := protojson.Marshal(out)
	if !strings.Contains(string(b), `"id":"default"`) && !strings.Contains(string(b), `"id": "default"`) {
		t.Fatalf("GetBucket answered %s", b)
	}
}
