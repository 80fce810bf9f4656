package rpcapi

import (
	"errors"

	"google.golang.org/protobuf/encoding/protowire"
)

// descIndex is a FileDescriptorSet split into its files, with the symbols each
// declares, read with protowire alone (no descriptorpb): what reflection answers.
type descIndex struct {
	files   map[string]*descFile // by path
	symbols map[string]string    // fully-qualified name → path of its file
}

// decl is a declaration inside a file or a message: its kind (the field number
// it is under in a FileDescriptorProto, or serviceMethod) and its bytes.
type decl struct {
	kind protowire.Number
	raw  []byte
}

// descFile is one serialized FileDescriptorProto and the files it imports.
type descFile struct {
	raw  []byte
	deps []string
}

// Field numbers of descriptor.proto used here.
const (
	setFile          = 1 // FileDescriptorSet.file
	fileName         = 1 // FileDescriptorProto.name
	filePackage      = 2
	fileDependency   = 3
	fileMessageType  = 4
	fileEnumType     = 5
	fileService      = 6
	messageName      = 1 // DescriptorProto.name, EnumDescriptorProto.name, ServiceDescriptorProto.name
	messageNested    = 3 // DescriptorProto.nested_type
	messageEnum      = 4 // DescriptorProto.enum_type
	serviceMethod    = 2 // ServiceDescriptorProto.method
	methodName       = 1 // MethodDescriptorProto.name
	errDescriptorSet = "malformed descriptor set"
)

// indexSet reads a serialized FileDescriptorSet.
func indexSet(set []byte) (*descIndex, error) {
	idx := &descIndex{files: map[string]*descFile{}, symbols: map[string]string{}}
	err := eachBytes(set, func(num protowire.Number, file []byte) error {
		if num != setFile {
			return nil
		}
		return idx.addFile(file)
	})
	if err == nil && len(idx.files) == 0 {
		err = errors.New("empty descriptor set")
	}
	return idx, err
}

// addFile indexes one FileDescriptorProto.
func (idx *descIndex) addFile(raw []byte) error {
	f := &descFile{raw: raw}
	var name, pkg string
	var decls []decl // read once the package is known
	err := eachBytes(raw, func(num protowire.Number, v []byte) error {
		switch num {
		case fileName:
			name = string(v)
		case filePackage:
			pkg = string(v)
		case fileDependency:
			f.deps = append(f.deps, string(v))
		case fileMessageType, fileEnumType, fileService:
			decls = append(decls, decl{num, v})
		}
		return nil
	})
	if err != nil || name == "" {
		return errors.New(errDescriptorSet)
	}
	idx.files[name] = f
	for _, d := range decls {
		if err := idx.addDecl(name, pkg, d); err != nil {
			return err
		}
	}
	return nil
}

// addDecl indexes a message (and what it nests), an enum or a service (and its
// methods) declared in file under the scope prefix.
func (idx *descIndex) addDecl(file, prefix string, d decl) error {
	var name string
	var nested []decl
	err := eachBytes(d.raw, func(num protowire.Number, v []byte) error {
		switch {
		case num == messageName:
			name = string(v)
		case d.kind == fileMessageType && num == messageNested:
			nested = append(nested, decl{fileMessageType, v})
		case d.kind == fileMessageType && num == messageEnum:
			nested = append(nested, decl{fileEnumType, v})
		case d.kind == fileService && num == serviceMethod:
			nested = append(nested, decl{serviceMethod, v})
		}
		return nil
	})
	if err != nil || name == "" {
		return errors.New(errDescriptorSet)
	}
	full := join(prefix, name)
	idx.symbols[full] = file
	for _, n := range nested {
		if n.kind == serviceMethod {
			if m := nameOf(n.raw); m != "" {
				idx.symbols[full+"."+m] = file
			}
			continue
		}
		if err := idx.addDecl(file, full, n); err != nil {
			return err
		}
	}
	return nil
}

// nameOf returns field 1 (name) of a descriptor message, "" if it has none.
func nameOf(raw []byte) string {
	var name string
	_ = eachBytes(raw, func(num protowire.Number, v []byte) error {
		if num == methodName {
			name = string(v)
		}
		return nil
	})
	return name
}

// join is a fully-qualified name in scope.
func join(scope, name string) string {
	if scope == "" {
		return name
	}
	return scope + "." + name
}

// eachBytes calls fn with each length-delimited field of the message b, skipping
// the others; a malformed message is an error.
func eachBytes(b []byte, fn func(num protowire.Number, v []byte) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return errors.New(errDescriptorSet)
		}
		b = b[n:]
		if typ != protowire.BytesType {
			if n = protowire.ConsumeFieldValue(num, typ, b); n < 0 {
				return errors.New(errDescriptorSet)
			}
			b = b[n:]
			continue
		}
		v, n := protowire.ConsumeBytes(b)
		if n < 0 {
			return errors.New(errDescriptorSet)
		}
		b = b[n:]
		if err := fn(num, v); err != nil {
			return err
		}
	}
	return nil
}

// withImports returns file and its imports not sent yet on the stream, file first
// and always (as grpc-go answers), marking them sent.
func (idx *descIndex) withImports(file string, sent map[string]bool) [][]byte {
	var out [][]byte
	var add func(name string, always bool)
	add = func(name string, always bool) {
		f := idx.files[name]
		if f == nil || sent[name] && !always {
			return
		}
		sent[name] = true
		out = append(out, f.raw)
		for _, d := range f.deps {
			add(d, false)
		}
	}
	add(file, true)
	return out
}
