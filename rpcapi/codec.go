package rpcapi

import (
	"errors"
	"fmt"

	"connectrpc.com/connect"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// strictJSON is the face's JSON codec: connect-go's own, except that a field the
// contract does not have is refused (INVALID_ARGUMENT) instead of dropped, so that
// a misspelt setting ({"publc": true}) is an error rather than a silent no-op.
// Binary protobuf keeps its usual rule (unknown fields are skipped: they cannot be
// told from a newer client's).
type strictJSON struct{ name string }

// jsonCodecs are strictJSON under every name connect-go gives its own JSON codec:
// each name left out would keep connect-go's lenient codec for its content type
// (application/json; charset=utf-8 would drop unknown fields).
var jsonCodecs = []strictJSON{{"json"}, {"json; charset=utf-8"}}

// Name is the codec's name in content types: "json" in application/json and
// application/grpc+json, "json; charset=utf-8" in application/json; charset=utf-8.
func (c strictJSON) Name() string { return c.name }

// Marshal encodes a message in the canonical protobuf JSON form.
func (strictJSON) Marshal(m any) ([]byte, error) {
	pm, ok := m.(proto.Message)
	if !ok {
		return nil, fmt.Errorf("%T is not a protobuf message", m)
	}
	return protojson.MarshalOptions{}.Marshal(pm)
}

// Unmarshal decodes b into m, refusing unknown fields.
func (strictJSON) Unmarshal(b []byte, m any) error {
	pm, ok := m.(proto.Message)
	if !ok {
		return fmt.Errorf("%T is not a protobuf message", m)
	}
	if len(b) == 0 {
		return errors.New("an empty body is not a JSON object")
	}
	return protojson.UnmarshalOptions{}.Unmarshal(b, pm)
}

// binaryProto is binary protobuf, as connect-go's own codec (which is not exported)
// does it.
type binaryProto struct{}

// Name is the codec's name in content types (application/grpc+proto...).
func (binaryProto) Name() string { return "proto" }

// Marshal encodes a message.
func (c binaryProto) Marshal(m any) ([]byte, error) { return c.MarshalAppend(nil, m) }

// MarshalAppend appends m's encoding to b (connect-go uses it to reuse buffers).
func (binaryProto) MarshalAppend(b []byte, m any) ([]byte, error) {
	pm, ok := m.(proto.Message)
	if !ok {
		return nil, fmt.Errorf("%T is not a protobuf message", m)
	}
	return proto.MarshalOptions{}.MarshalAppend(b, pm)
}

// Unmarshal decodes b into m.
func (binaryProto) Unmarshal(b []byte, m any) error {
	pm, ok := m.(proto.Message)
	if !ok {
		return fmt.Errorf("%T is not a protobuf message", m)
	}
	if err := proto.Unmarshal(b, pm); err != nil {
		return fmt.Errorf("unmarshal into %T: %w", m, err)
	}
	return nil
}

// stamped is a codec of the face: it stamps each message it decodes with the
// size it decoded (budget.go).
type stamped struct{ connect.Codec }

// stampedCodecs are the face's codecs: binary protobuf and strictJSON, stamped.
func stampedCodecs() connect.HandlerOption {
	return connect.WithHandlerOptions(connect.WithCodec(stamped{binaryProto{}}),
		connect.WithCodec(stamped{jsonCodecs[0]}), connect.WithCodec(stamped{jsonCodecs[1]}))
}

// Unmarshal decodes b into m and stamps m with len(b).
func (c stamped) Unmarshal(b []byte, m any) error {
	if err := c.Codec.Unmarshal(b, m); err != nil {
		return err
	}
	stamp(m, len(b))
	return nil
}

// MarshalAppend appends m's encoding to b, with the wrapped codec's MarshalAppend
// if it has one.
func (c stamped) MarshalAppend(b []byte, m any) ([]byte, error) {
	if ma, ok := c.Codec.(interface {
		MarshalAppend([]byte, any) ([]byte, error)
	}); ok {
		return ma.MarshalAppend(b, m)
	}
	out, err := c.Codec.Marshal(m)
	return append(b, out...), err
}
