// Package imagerpc is the generated protobuf code of the protocol between coffer
// serve and its image worker; imaging/remote frames and speaks it.
package imagerpc

// protoc from Debian's protobuf-compiler, protoc-gen-go v1.36.12 from the Go module proxy
// (go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12).
//go:generate protoc --go_out=. --go_opt=paths=source_relative imagerpc.proto
