// Package proto holds coffer's management contract (coffer/admin/v1/*.proto, the
// buf module of buf.yaml) and, under gen/, the Go code generated from it: the
// messages (adminv1) and the Connect clients and handlers (adminv1connect), served by
// rpcapi and used by `coffer admin`.
//
// The generated code is checked in. It is made by `buf generate` with local plugins
// only (buf.gen.yaml): protoc-gen-go and protoc-gen-connect-go at the versions of
// go.mod, built by the test that checks it is up to date (gen_test.go), which with
// -update rewrites it. scripts/buf.sh lints the module and checks it for breaking
// changes against the previous commit.
//
// gen/descriptors.binpb is the module's descriptor set (`buf build`: every file with
// its imports and comments), embedded as Descriptors for the RPC face's server
// reflection, which reads it only when asked.
package proto

import _ "embed"

//go:generate go test -run ^TestGeneratedCodeIsUpToDate$ . -args -update

// Descriptors is the serialized google.protobuf.FileDescriptorSet of every .proto
// file here and the files they import, with their comments.
//
//go:embed gen/descriptors.binpb
var Descriptors []byte
