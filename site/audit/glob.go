package audit

import (
	"strings"

	"github.com/coffer/coffer"
)

// Limits of a path glob.
const (
	maxGlobLen      = 1024
	maxGlobSegments = 64
)

// Glob is a parsed path pattern of a query. Segments are separated by '/'; in a
// segment '*' matches any run of characters other than '/' (none included); a segment
// that is exactly "**" matches any number of whole segments (none included). Every
// other character matches itself. So "/assets/**" matches "/assets", "/assets/" and
// "/assets/a/b.css"; "/*.html" matches "/index.html" but not "/a/index.html";
// "/**/*.js" matches every path ending in ".js". The empty pattern matches every path.
type Glob struct {
	segs []string // nil: every path
}

// ParseGlob parses pattern. It returns EINVALID for a pattern that does not start
// with '/', is longer than 1024 bytes or 64 segments, or has "**" inside a segment.
func ParseGlob(pattern string) (Glob, error) {
	if pattern == "" {
		return Glob{}, nil
	}
	switch {
	case pattern[0] != '/':
		return Glob{}, coffer.InvalidField("path", "a path pattern starts with /")
	case len(pattern) > maxGlobLen:
		return Glob{}, coffer.InvalidField("path", "a path pattern is at most 1024 bytes")
	case strings.Count(pattern, "/") > maxGlobSegments:
		return Glob{}, coffer.InvalidField("path", "a path pattern has at most 64 segments")
	}
	var segs []string
	for seg := range strings.SplitSeq(pattern[1:], "/") {
		if seg != "**" && strings.Contains(seg, "**") {
			return Glob{}, coffer.InvalidField("path", `"**" must be a whole segment of a path pattern`)
		}
		if seg == "**" && len(segs) > 0 && segs[len(segs)-1] == "**" {
			continue // "**/**" is "**"
		}
		segs = append(segs, seg)
	}
	return Glob{segs: segs}, nil
}

// Match reports whether path matches g.
func (g Glob) Match(path string) bool {
	if g.segs == nil {
		return true
	}
	if path == "" || path[0] != '/' {
		return false
	}
	return matchSegments(g.segs, strings.Split(path[1:], "/"))
}

// matchSegments matches path's segments against the pattern's: one pattern segment
// matches one path segment, "**" any number of them.
func matchSegments(pat, path []string) bool {
	return wildcard(len(pat), len(path), func(pi int) bool { return pat[pi] == "**" },
		func(pi, si int) bool { return matchSegment(pat[pi], path[si]) })
}

// matchSegment matches one path segment against a pattern segment in which '*'
// matches any run of bytes.
func matchSegment(pat, s string) bool {
	return wildcard(len(pat), len(s), func(pi int) bool { return pat[pi] == '*' },
		func(pi, si int) bool { return pat[pi] == s[si] })
}

// wildcard matches a pattern of np elements against a subject of ns elements: an
// element for which star is true matches any run of subject elements, any other
// matches one subject element when eq says so. The last star seen is the only
// backtracking point, as in the classic wildcard algorithm, so the cost is
// O(np * ns) at worst.
func wildcard(np, ns int, star func(pi int) bool, eq func(pi, si int) bool) bool {
	pi, si, starPi, starSi := 0, 0, -1, 0
	for si < ns {
		switch {
		case pi < np && star(pi):
			starPi, starSi = pi, si
			pi++
		case pi < np && eq(pi, si):
			pi++
			si++
		case starPi >= 0:
			starSi++
			pi, si = starPi+1, starSi
		default:
			return false
		}
	}
	for pi < np && star(pi) {
		pi++
	}
	return pi == np
}
