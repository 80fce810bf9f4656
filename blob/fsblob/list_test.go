package fsblob

import "testing"

// TestListRoot checks the directory List walks for a prefix: the prefix's directory
// part when it is a plain relative path, else all of objects/.
func TestListRoot(t *testing.T) {
	for prefix, want := range map[string]string{
		"": ".", "f": ".", "f/": "f", "f/ab": "f", "v/123/": "v/123", "v/123/w8": "v/123",
		"/abs/x": ".", "../x/y": ".", "a/../b/c": ".", "a//b": ".",
	} {
		if got := listRoot(prefix); got != want {
			t.Errorf("listRoot(%q) = %q, want %q", prefix, got, want)
		}
	}
}
