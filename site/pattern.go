package site

import (
	"errors"
	"math/bits"
	"strings"
	"unicode/utf8"
)

// Pattern bounds.
const (
	maxPatternLen   = 512
	maxPatternStars = 8
)

// patternKind says how a pattern matches.
type patternKind uint8

const (
	patExact   patternKind = iota // no "*": the path itself
	patPrefix                     // ends in "/*", no other "*": that prefix, any depth
	patGlob                       // "*" within a segment, "**" across segments
	patSegment                    // a match pattern without "/": the last path segment
)

// anyDepth marks "**" (and a trailing "/*") in a compiled glob; patterns never
// hold control characters, so it cannot be a literal.
const anyDepth = '\x01'

// pattern is a compiled path pattern.
type pattern struct {
	kind patternKind
	// literal is the pattern up to its first "*" (all of it when exact): a
	// stripPrefix must be a prefix of it, and :splat is what follows it.
	literal string
	// glob is the pattern for patGlob and patSegment: literal bytes, '*' for one
	// segment's characters, anyDepth for any characters.
	glob string
}

// parsePattern compiles a route's path pattern or the path form of a match
// pattern: "/" first, no empty, "." or ".." segment, no "***", no
// characters outside a URL path's, at most maxPatternStars wildcards.
func parsePattern(p string) (*pattern, error) {
	if len(p) == 0 || p[0] != '/' || len(p) > maxPatternLen {
		return nil, errors.New(`a pattern starts with "/" and is at most 512 bytes`)
	}
	if err := patternChars(p); err != nil {
		return nil, err
	}
	if strings.Contains(p, "//") {
		return nil, errors.New(`a pattern has no empty segments ("//")`)
	}
	for _, seg := range strings.Split(p[1:], "/") {
		if seg == "." || seg == ".." {
			return nil, errors.New(`a pattern has no "." or ".." segments`)
		}
	}
	star := strings.IndexByte(p, '*')
	pat := &pattern{literal: p}
	switch {
	case star < 0:
		pat.kind = patExact
	case star == len(p)-1 && p[star-1] == '/':
		pat.kind, pat.literal = patPrefix, p[:star]
	default:
		pat.kind, pat.literal = patGlob, p[:star]
		pat.glob = compileGlob(p)
	}
	return pat, nil
}

// parseMatch compiles a header or cache rule's match: with a "/" a path pattern,
// without one a pattern of the last segment ("*.html").
func parseMatch(m string) (*pattern, error) {
	if strings.Contains(m, "/") {
		return parsePattern(m)
	}
	if m == "" || len(m) > maxPatternLen {
		return nil, errors.New(`a match is a path pattern or a file name pattern such as "*.html"`)
	}
	if err := patternChars(m); err != nil {
		return nil, err
	}
	return &pattern{kind: patSegment, glob: strings.ReplaceAll(m, "**", "*")}, nil
}

// patternChars refuses bytes a pattern cannot hold and more than
// maxPatternStars wildcards or "***".
func patternChars(p string) error {
	if !utf8.ValidString(p) || strings.Contains(p, "***") {
		return errors.New(`a pattern is UTF-8 without "***"`)
	}
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c <= ' ' || c == 0x7f || c == '\\' || c == '?' || c == '#' || c == '%' {
			return errors.New(`a pattern holds no spaces, control characters, "\", "?", "#" or "%"`)
		}
	}
	if strings.Count(strings.ReplaceAll(p, "**", "*"), "*") > maxPatternStars {
		return errors.New("a pattern has at most 8 wildcards")
	}
	return nil
}

// compileGlob turns "**" and a trailing "/*" into anyDepth.
func compileGlob(p string) string {
	if strings.HasSuffix(p, "/*") && !strings.HasSuffix(p, "**") {
		p = p[:len(p)-1] + "**"
	}
	return strings.ReplaceAll(p, "**", string(anyDepth))
}

// match reports whether the clean path p matches.
func (t *pattern) match(p string) bool {
	switch t.kind {
	case patExact:
		return p == t.literal
	case patPrefix:
		return strings.HasPrefix(p, t.literal)
	case patSegment:
		return globMatch(t.glob, p[strings.LastIndexByte(p, '/')+1:])
	}
	return len(p) >= len(t.literal) && p[:len(t.literal)] == t.literal && globMatch(t.glob, p)
}

// splat is what follows the pattern's literal part in p (which it matched).
func (t *pattern) splat(p string) string {
	if len(p) < len(t.literal) {
		return ""
	}
	return p[len(t.literal):]
}

// stateSet is a set of positions in a glob, on the stack.
type stateSet [(maxPatternLen + 64) / 64]uint64

func (s *stateSet) add(i int)      { s[i>>6] |= 1 << (i & 63) }
func (s *stateSet) has(i int) bool { return s[i>>6]&(1<<(i&63)) != 0 }

// globMatch runs the glob as an NFA over s: O(len(s)·len(glob)/64) words, no
// backtracking, no allocation. '*' matches any run of bytes but '/', anyDepth any run.
func globMatch(glob, s string) bool {
	var cur stateSet
	cur.add(0)
	closeStars(glob, &cur)
	for i := 0; i < len(s); i++ {
		var next stateSet
		c, any := s[i], false
		for w, word := range cur {
			for word != 0 {
				j := w<<6 | bits.TrailingZeros64(word)
				word &= word - 1
				if j == len(glob) {
					continue
				}
				switch g := glob[j]; {
				case g == anyDepth || g == '*' && c != '/':
					next.add(j)
					any = true
				case g == c:
					next.add(j + 1)
					any = true
				}
			}
		}
		if !any {
			return false
		}
		closeStars(glob, &next)
		cur = next
	}
	return cur.has(len(glob))
}

// closeStars adds, for every position at a wildcard, the position after it
// (a wildcard matches the empty run too), in order so runs of them chain.
func closeStars(glob string, s *stateSet) {
	for j := 0; j < len(glob); j++ {
		if s.has(j) && (glob[j] == '*' || glob[j] == anyDepth) {
			s.add(j + 1)
		}
	}
}
