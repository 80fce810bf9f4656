package rpcapi

import (
	"errors"
	"fmt"

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
