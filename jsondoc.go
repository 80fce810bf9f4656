package coffer

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
)

// DecodeDocument decodes doc, one JSON object, into v strictly: unknown fields
// and data after the object are refused. Errors are EINVALID with Field the
// field at fault when known; what names the document in messages ("settings").
func DecodeDocument(doc []byte, v any, what string) error {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return documentErr(err, what)
	}
	if _, err := dec.Token(); err != io.EOF {
		return InvalidField("", what+": data after the JSON object")
	}
	return nil
}

// documentErr turns a JSON decoding error into an EINVALID naming the field.
func documentErr(err error, what string) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return InvalidField(te.Field, te.Field+": wrong type (want "+te.Type.String()+")")
	}
	if msg, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return InvalidField(strings.Trim(msg, `"`), what+": unknown field "+msg)
	}
	return InvalidField("", what+": not a JSON object: "+err.Error())
}
