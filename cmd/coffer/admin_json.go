package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"strconv"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// plainJSON renders m as `coffer admin --output json` prints it: the JSON
// conventions of /v1 rather than protojson's. Field names are camelCase (the proto
// JSON names), 64-bit integers are numbers (protojson quotes them), enums are their
// names, timestamps and durations their RFC 3339 and "1.5s" forms, every field is
// present (unset ones with their zero value; unset fields with presence and unset
// oneofs are left out), in the order of the .proto file, indented by two spaces.
// protojson also varies its spaces from build to build; this output is stable.
func plainJSON(m proto.Message) ([]byte, error) {
	v, err := plainMessage(m.ProtoReflect())
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// object is a JSON object whose keys keep their order.
type object struct {
	keys []string
	vals []any
}

// MarshalJSON implements json.Marshaler.
func (o *object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		vb, err := marshalNoEscape(o.vals[i])
		if err != nil {
			return nil, err
		}
		b.Write(vb)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// marshalNoEscape is json.Marshal without HTML escaping (URLs keep their '&').
func marshalNoEscape(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// plainMessage renders one message: a well-known type in its protojson form (with a
// wrapped 64-bit integer as a number), any other as an object of its fields.
func plainMessage(m protoreflect.Message) (any, error) {
	md := m.Descriptor()
	if md.ParentFile().Package() == "google.protobuf" {
		return wellKnown(m)
	}
	o := &object{}
	fields := md.Fields()
	for i := 0; i < fields.Len(); i++ {
		fd := fields.Get(i)
		if fd.HasPresence() && !m.Has(fd) {
			continue // an unset optional field or oneof member: absent, as protojson leaves it
		}
		v, err := plainField(fd, m.Get(fd))
		if err != nil {
			return nil, err
		}
		o.keys, o.vals = append(o.keys, fd.JSONName()), append(o.vals, v)
	}
	return o, nil
}

// wellKnown renders a google.protobuf message as protojson does, but a wrapped
// 64-bit integer as a number.
func wellKnown(m protoreflect.Message) (any, error) {
	b, err := protojson.Marshal(m.Interface())
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	switch m.Descriptor().Name() {
	case "Int64Value", "UInt64Value":
		if s, ok := v.(string); ok {
			return json.Number(s), nil
		}
	}
	return v, nil
}

// plainField renders a field's value: a list, a map or one value.
func plainField(fd protoreflect.FieldDescriptor, v protoreflect.Value) (any, error) {
	switch {
	case fd.IsList():
		l := v.List()
		out := make([]any, 0, l.Len())
		for i := 0; i < l.Len(); i++ {
			e, err := plainValue(fd, l.Get(i))
			if err != nil {
				return nil, err
			}
			out = append(out, e)
		}
		return out, nil
	case fd.IsMap():
		out := map[string]any{} // encoding/json sorts a map's keys: stable
		var err error
		v.Map().Range(func(k protoreflect.MapKey, mv protoreflect.Value) bool {
			var e any
			if e, err = plainValue(fd.MapValue(), mv); err == nil {
				out[k.String()] = e
			}
			return err == nil
		})
		return out, err
	}
	return plainValue(fd, v)
}

// plainValue renders one scalar, enum or message value of fd's kind.
func plainValue(fd protoreflect.FieldDescriptor, v protoreflect.Value) (any, error) {
	switch fd.Kind() {
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return plainMessage(v.Message())
	case protoreflect.EnumKind:
		if ev := fd.Enum().Values().ByNumber(v.Enum()); ev != nil {
			return string(ev.Name()), nil
		}
		return int32(v.Enum()), nil
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return json.Number(strconv.FormatInt(v.Int(), 10)), nil
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return json.Number(strconv.FormatUint(v.Uint(), 10)), nil
	case protoreflect.BytesKind:
		return base64.StdEncoding.EncodeToString(v.Bytes()), nil
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		return plainFloat(v.Float()), nil
	}
	return v.Interface(), nil
}

// plainFloat is a float as JSON can carry it: NaN and the infinities as protojson
// writes them (strings), since JSON numbers cannot.
func plainFloat(f float64) any {
	switch {
	case f != f:
		return "NaN"
	case f > 1.7976931348623157e308:
		return "Infinity"
	case f < -1.7976931348623157e308:
		return "-Infinity"
	}
	return f
}
