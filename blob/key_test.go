package blob

import (
	"strings"
	"testing"
)

func TestValidateKey(t *testing.T) {
	for _, k := range []string{"a", "f/ab/0123abcd", "a.b-c_d/E"} {
		if err := ValidateKey(k); err != nil {
			t.Errorf("ValidateKey(%q) = %v", k, err)
		}
	}
	for _, k := range []string{"", "/a", "a/", "a//b", "../a", "a/./b", "a b", "a\\b", "é", strings.Repeat("a", 513)} {
		if ValidateKey(k) == nil {
			t.Errorf("ValidateKey(%q) accepted", k)
		}
	}
}

func FuzzValidateKey(f *testing.F) {
	for _, k := range []string{"a/b", "../x", "a//b", "/x", "f/ab/cd"} {
		f.Add(k)
	}
	f.Fuzz(func(t *testing.T, k string) {
		if ValidateKey(k) != nil {
			return
		}
		if strings.HasPrefix(k, "/") || strings.Contains(k, "..") && strings.Contains("/"+k+"/", "/../") || strings.Contains(k, "//") {
			t.Fatalf("accepted %q", k)
		}
	})
}
