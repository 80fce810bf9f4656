package httpserve_test

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/coffer/coffer/internal/httpserve"
)

// A client's X-Request-Id is kept when short and plain; otherwise, or without one,
// the request gets a fresh id, never the same twice.
func TestIDsFor(t *testing.T) {
	ids := httpserve.NewIDs()
	seen := map[string]bool{}
	for _, c := range []struct{ sent, keep string }{
		{"abc-1_2.3", "abc-1_2.3"}, {"", ""}, {"has space", ""}, {"x\ny", ""},
		{strings.Repeat("a", 64), strings.Repeat("a", 64)}, {strings.Repeat("a", 65), ""},
	} {
		r := httptest.NewRequest("GET", "/", nil)
		if c.sent != "" {
			r.Header["X-Request-Id"] = []string{c.sent}
		}
		got := ids.For(r)
		switch {
		case c.keep != "" && got != c.keep:
			t.Errorf("%q: id %q, want it kept", c.sent, got)
		case c.keep == "" && (got == c.sent || got == "" || seen[got]):
			t.Errorf("%q: id %q, want a fresh one", c.sent, got)
		}
		seen[got] = true
	}
}
