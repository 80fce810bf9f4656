package coffer

import (
	"strings"
	"testing"
)

func TestLike(t *testing.T) {
	cases := []struct {
		s, p string
		fold bool
		want bool
	}{
		{"abc", "abc", false, true}, {"abc", "a%", false, true}, {"abc", "%c", false, true},
		{"abc", "a_c", false, true}, {"abc", "a_", false, false}, {"abc", "%", false, true},
		{"", "%", false, true}, {"", "_", false, false}, {"a%c", `a\%c`, false, true},
		{"abc", `a\%c`, false, false}, {"a_c", `a\_c`, false, true}, {"ABC", "abc", false, false},
		{"ABC", "abc", true, true}, {"ABC", "a%", true, true}, {"photos/me.png", "photos/%.png", false, true},
		{"aaa", "%a%a%a%a", false, false}, {"日本語", "日_語", false, true},
	}
	for _, c := range cases {
		if got := Like(c.s, c.p, c.fold); got != c.want {
			t.Errorf("Like(%q, %q, %v) = %v", c.s, c.p, c.fold, got)
		}
	}
	// Pathological pattern stays fast (the backtracking is bounded).
	if Like(strings.Repeat("a", 5000), strings.Repeat("%a", 200)+"b", false) {
		t.Fatal("should not match")
	}
}
