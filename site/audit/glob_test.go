package audit

import (
	"strings"
	"testing"

	"github.com/coffer/coffer"
)

func TestGlob(t *testing.T) {
	tests := []struct {
		pattern string
		match   []string
		nomatch []string
	}{
		{"", []string{"/", "/a/b", ""}, nil},
		{"/", []string{"/"}, []string{"/a"}},
		{"/index.html", []string{"/index.html"}, []string{"/index.htm", "/a/index.html", "index.html"}},
		{"/*.html", []string{"/index.html", "/.html"}, []string{"/a/index.html", "/index.htm"}},
		{"/assets/**", []string{"/assets", "/assets/", "/assets/a/b.css"}, []string{"/asset", "/x/assets/a"}},
		{"/**/*.js", []string{"/a.js", "/a/b/c.js"}, []string{"/a.css", "/a/b.jsx"}},
		{"/a/*/c", []string{"/a/b/c", "/a//c"}, []string{"/a/b/x/c", "/a/c"}},
		{"/a/**/c", []string{"/a/c", "/a/b/c", "/a/b/x/c"}, []string{"/a/b/x/d", "/b/c"}},
		{"/*a*b*", []string{"/ab", "/xaybz", "/aab"}, []string{"/ba", "/a/b"}},
		{"/**", []string{"/", "/a/b/c"}, nil},
	}
	for _, tt := range tests {
		g, err := ParseGlob(tt.pattern)
		if err != nil {
			t.Fatalf("ParseGlob(%q): %v", tt.pattern, err)
		}
		for _, p := range tt.match {
			if !g.Match(p) {
				t.Errorf("%q does not match %q", tt.pattern, p)
			}
		}
		for _, p := range tt.nomatch {
			if g.Match(p) {
				t.Errorf("%q matches %q", tt.pattern, p)
			}
		}
	}
}

func TestGlobInvalid(t *testing.T) {
	for _, p := range []string{"a/b", "/a**", "/**b/c", "/" + strings.Repeat("a", 1024), strings.Repeat("/a", 65)} {
		if _, err := ParseGlob(p); coffer.ErrorCode(err) != coffer.EINVALID {
			t.Errorf("ParseGlob(%q) = %v, want EINVALID", p, err)
		}
	}
}

// refMatch is a slow, obviously correct matcher: recursion over segments and bytes.
func refMatch(pat, path []string) bool {
	if len(pat) == 0 {
		return len(path) == 0
	}
	if pat[0] == "**" {
		for i := 0; i <= len(path); i++ {
			if refMatch(pat[1:], path[i:]) {
				return true
			}
		}
		return false
	}
	return len(path) > 0 && refSegment(pat[0], path[0]) && refMatch(pat[1:], path[1:])
}

// refSegment matches one segment byte by byte, '*' by trying every length.
func refSegment(pat, s string) bool {
	if pat == "" {
		return s == ""
	}
	if pat[0] == '*' {
		for i := 0; i <= len(s); i++ {
			if refSegment(pat[1:], s[i:]) {
				return true
			}
		}
		return false
	}
	return s != "" && s[0] == pat[0] && refSegment(pat[1:], s[1:])
}

func FuzzParseGlob(f *testing.F) {
	for _, s := range [][2]string{{"/**/*.js", "/a/b.js"}, {"/a/*/c", "/a/b/c"}, {"/*a*", "/ba"}, {"x", "/"}, {"/**b", "/b"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pattern, path string) {
		g, err := ParseGlob(pattern)
		if err != nil {
			if coffer.ErrorCode(err) != coffer.EINVALID {
				t.Fatalf("ParseGlob(%q): %v is not EINVALID", pattern, err)
			}
			return
		}
		got := g.Match(path)
		if pattern == "" || len(pattern) > 24 || len(path) > 24 {
			return // the reference is exponential
		}
		want := path != "" && path[0] == '/' && refMatch(g.segs, strings.Split(path[1:], "/"))
		if got != want {
			t.Fatalf("%q.Match(%q) = %v, reference %v", pattern, path, got, want)
		}
	})
}
