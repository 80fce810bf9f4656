package archtest

import (
	"reflect"
	"testing"
)

// chainsTo finds forbidden packages however deep, with a shortest chain each, and
// stops at the first forbidden package on a path.
func TestChainsTo(t *testing.T) {
	imports := map[string][]string{
		"a":     {"b", "c"},
		"b":     {"x/y/z", "c"},
		"c":     {"d"},
		"d":     {"x/w", "e"},
		"x/w":   {"x/y/z"},
		"x/y/z": nil,
		"e":     nil,
	}
	got := chainsTo("a", imports, []string{"x"})
	want := [][]string{{"a", "b", "x/y/z"}, {"a", "c", "d", "x/w"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("chains %q, want %q", got, want)
	}
	if got := chainsTo("a", imports, []string{"x/y/zz", "f"}); got != nil {
		t.Errorf("chains %q to packages nobody imports", got)
	}
}

// allows takes exact paths and "/..." trees.
func TestAllows(t *testing.T) {
	allowed := []string{"a/b", "x/..."}
	for p, want := range map[string]bool{"a/b": true, "a/b/c": false, "a": false, "x": true, "x/y/z": true, "xy": false} {
		if got := allows(allowed, p); got != want {
			t.Errorf("allows(%q) = %v, want %v", p, got, want)
		}
	}
}
