package hasura

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
)

// decodeCase is a JSON route body of the shape PATCH /v1/buckets/{id} takes.
type decodeCase struct {
	Public *bool   `json:"public"`
	Name   *string `json:"name"`
}

// decodeJSON accepts exactly one JSON object and nothing after it: a stray bracket, a
// second document and a null body are refused (dec.More alone let `{...}]` through).
func TestDecodeJSONOneObject(t *testing.T) {
	for body, ok := range map[string]bool{
		`{"public":true}`:             true,
		" {\"name\":\"x\"} \n":        true,
		`{}`:                          true,
		`{"public":true}]`:            false,
		`{"public":true}}`:            false,
		`{"public":true}{"name":"x"}`: false,
		`{"public":true} x`:           false,
		`null`:                        false,
		`[]`:                          false,
		`"s"`:                         false,
		``:                            false,
		`{"other":1}`:                 false,
	} {
		var v decodeCase
		err := decodeJSON(httptest.NewRequest("PATCH", "/", strings.NewReader(body)), &v)
		if (err == nil) != ok {
			t.Errorf("%q: err %v, want accepted=%v", body, err, ok)
		}
	}
}

// FuzzDecodeJSON: decodeJSON never panics, and what it accepts is one JSON object
// with nothing but white space after it.
func FuzzDecodeJSON(f *testing.F) {
	for _, s := range []string{`{"public":true}`, `{"name":"a"}]`, `null`, `{}{}`, `{"public":tru`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		var v decodeCase
		if decodeJSON(httptest.NewRequest("PATCH", "/", strings.NewReader(body)), &v) != nil {
			return
		}
		trimmed := bytes.TrimSpace([]byte(body))
		if !json.Valid(trimmed) || trimmed[0] != '{' {
			t.Fatalf("accepted %q", body)
		}
	})
}
