package imaging

import "testing"

func TestVariantFileID(t *testing.T) {
	for key, want := range map[string]string{"v/abc/123": "abc", "f/ab/cd": "", "v/": ""} {
		if got, _ := VariantFileID(key); got != want {
			t.Errorf("VariantFileID(%q) = %q, want %q", key, got, want)
		}
	}
	// A key names its file, and a tag differs when the source or the options do.
	if id, ok := VariantFileID(VariantKey("abc", `"e"`, "w=1")); !ok || id != "abc" {
		t.Errorf("VariantFileID(VariantKey) = %q, %v", id, ok)
	}
	if VariantTag(`"e"`, "w=1") == VariantTag(`"e2"`, "w=1") || VariantTag(`"e"`, "w=1") == VariantTag(`"e"`, "w=2") {
		t.Error("variant tags collide")
	}
}
