package rpcapi

import (
	"context"
	"errors"
	"io"
	"sort"
	"sync"

	"connectrpc.com/connect"
	"connectrpc.com/grpchealth"

	contract "github.com/coffer/coffer/proto"
	reflectionv1 "github.com/coffer/coffer/proto/gen/grpc/reflection/v1"
	"github.com/coffer/coffer/proto/gen/grpc/reflection/v1/reflectionv1connect"
)

// reflectionV1Alpha is the older reflection service, which some clients still ask
// first; its messages are v1's on the wire. It is served but not listed: its schema
// is not in the descriptor set.
const reflectionV1Alpha = "grpc.reflection.v1alpha.ServerReflection"

// handleReflection routes reflection v1 and v1alpha to a reflector of the face's
// services, health and reflection itself.
func (h *Handler) handleReflection(opts connect.HandlerOption) {
	r := newReflector(contract.Descriptors, append(services, grpchealth.HealthV1ServiceName, reflectionv1connect.ServerReflectionName)...)
	h.handle(reflectionv1connect.NewServerReflectionHandler(r, opts))
	h.handle("/"+reflectionV1Alpha+"/", connect.NewBidiStreamHandler("/"+reflectionV1Alpha+"/ServerReflectionInfo", r.ServerReflectionInfo, opts))
}

// reflector answers gRPC server reflection (what `grpcurl list` and Postman ask)
// from the contract's descriptor set (proto.Descriptors, comments included). It is
// coffer's own rather than connectrpc.com/grpcreflect's, which decodes and builds
// descriptors when the program starts (about 3 MB of idle RSS, measured with
// scripts/idle-rss.sh), and it links no descriptorpb: the set is split into its
// files, and their symbols indexed, with protowire at the first reflection call.
type reflector struct {
	names []string // the services listed, sorted
	set   []byte
	once  sync.Once
	index *descIndex
	err   error // the set could not be read (a bug: TestReflectionAndHealth reads it)
}

var _ reflectionv1connect.ServerReflectionHandler = (*reflector)(nil)

// newReflector lists names (full service names) and describes the files of set.
func newReflector(set []byte, names ...string) *reflector {
	r := &reflector{names: append([]string{}, names...), set: set}
	sort.Strings(r.names)
	return r
}

// loaded returns the index of the descriptor set, read once.
func (r *reflector) loaded() (*descIndex, error) {
	r.once.Do(func() { r.index, r.err = indexSet(r.set) })
	return r.index, r.err
}

// ServerReflectionInfo answers each request on the stream until the client ends it.
func (r *reflector) ServerReflectionInfo(ctx context.Context, stream *connect.BidiStream[reflectionv1.ServerReflectionRequest, reflectionv1.ServerReflectionResponse]) error {
	sent := map[string]bool{} // files already sent on this stream: each goes once
	for {
		req, err := stream.Receive()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		res := &reflectionv1.ServerReflectionResponse{ValidHost: req.GetHost(), OriginalRequest: req}
		r.answer(req, res, sent)
		if err := stream.Send(res); err != nil {
			return err
		}
	}
}

// answer fills res for req.
func (r *reflector) answer(req *reflectionv1.ServerReflectionRequest, res *reflectionv1.ServerReflectionResponse, sent map[string]bool) {
	if _, ok := req.GetMessageRequest().(*reflectionv1.ServerReflectionRequest_ListServices); ok {
		list := &reflectionv1.ListServiceResponse{}
		for _, n := range r.names {
			list.Service = append(list.Service, &reflectionv1.ServiceResponse{Name: n})
		}
		res.MessageResponse = &reflectionv1.ServerReflectionResponse_ListServicesResponse{ListServicesResponse: list}
		return
	}
	idx, err := r.loaded()
	if err != nil {
		res.MessageResponse = errorResponse(connect.CodeInternal, "the descriptor set cannot be read")
		return
	}
	var file string
	switch m := req.GetMessageRequest().(type) {
	case *reflectionv1.ServerReflectionRequest_FileByFilename:
		file = m.FileByFilename
	case *reflectionv1.ServerReflectionRequest_FileContainingSymbol:
		file = idx.symbols[m.FileContainingSymbol]
	case *reflectionv1.ServerReflectionRequest_AllExtensionNumbersOfType:
		if idx.symbols[m.AllExtensionNumbersOfType] != "" { // the contract declares no extensions
			res.MessageResponse = &reflectionv1.ServerReflectionResponse_AllExtensionNumbersResponse{
				AllExtensionNumbersResponse: &reflectionv1.ExtensionNumberResponse{BaseTypeName: m.AllExtensionNumbersOfType}}
			return
		}
	}
	if idx.files[file] == nil {
		res.MessageResponse = errorResponse(connect.CodeNotFound, "not found")
		return
	}
	res.MessageResponse = &reflectionv1.ServerReflectionResponse_FileDescriptorResponse{
		FileDescriptorResponse: &reflectionv1.FileDescriptorResponse{FileDescriptorProto: idx.withImports(file, sent)}}
}

// errorResponse is a reflection error answer.
func errorResponse(code connect.Code, msg string) *reflectionv1.ServerReflectionResponse_ErrorResponse {
	return &reflectionv1.ServerReflectionResponse_ErrorResponse{ErrorResponse: &reflectionv1.ErrorResponse{
		ErrorCode: int32(code), ErrorMessage: msg}}
}
