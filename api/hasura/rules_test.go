package hasura_test

import (
	"net/http"
	"strings"
	"testing"
)

// TestPutRulesEmptyDocumentKeepsRules (D5): PUT /v1/rules with null, {} or an
// empty body is 400 naming "rules" and the rules in force stay; {"rules": []}
// removes them, explicitly. Before the fix each of the three answered 200 and
// deleted every rule.
func TestPutRulesEmptyDocumentKeepsRules(t *testing.T) {
	const doc = `{"rules":[{"buckets":["default"],"read":{"filter":{}},"role":"user"}]}`
	e := newEnv(t, envOptions{rules: doc})
	for _, body := range []string{"null", "{}", "", `{"rules":null}`} {
		msg := mustError(t, e.do("PUT", "/v1/rules", strings.NewReader(body), true), http.StatusBadRequest)
		if !strings.HasPrefix(msg, "rules: missing") {
			t.Errorf("PUT %q: message %q, want it to name rules", body, msg)
		}
		if got := string(mustStatus(t, e.do("GET", "/v1/rules", nil, true), http.StatusOK, nil)); got != doc {
			t.Fatalf("after PUT %q the rules are %s, want %s", body, got, doc)
		}
	}
	got := mustStatus(t, e.do("PUT", "/v1/rules", strings.NewReader(`{"rules":[]}`), true), http.StatusOK, nil)
	if string(got) != `{"rules":[]}` {
		t.Fatalf("explicit clear answered %s", got)
	}
}
