package auth

import (
	"errors"
	"strconv"
	"strings"
)

// jsonPath is a parsed JSON path of the small subset Hasura accepts in
// claims_namespace_path and claims_map: "$", then any of ".name", "['name']",
// "[\"name\"]" and "[index]". Each element is a string (object key) or an int
// (array index).
type jsonPath []any

// maxPathLen bounds configured paths; they come from the operator, not from tokens.
const maxPathLen = 1024

// parseJSONPath parses s. The error says what is wrong, without the field name
// (the caller adds it).
func parseJSONPath(s string) (jsonPath, error) {
	if len(s) > maxPathLen {
		return nil, errors.New("path is too long")
	}
	if !strings.HasPrefix(s, "$") {
		return nil, errors.New(`path must start with "$"`)
	}
	var p jsonPath
	for rest := s[1:]; rest != ""; {
		elem, n, err := pathElem(rest)
		if err != nil {
			return nil, err
		}
		p = append(p, elem)
		rest = rest[n:]
	}
	return p, nil
}

// pathElem parses one element at the start of s and returns it and its length.
func pathElem(s string) (any, int, error) {
	switch s[0] {
	case '.':
		end := strings.IndexAny(s[1:], ".[")
		if end < 0 {
			end = len(s) - 1
		}
		if end == 0 {
			return nil, 0, errors.New("empty name after '.'")
		}
		return s[1 : 1+end], 1 + end, nil
	case '[':
		return bracketElem(s)
	}
	return nil, 0, errors.New("expected '.' or '['")
}

// bracketElem parses "['name']", "[\"name\"]" or "[index]".
func bracketElem(s string) (any, int, error) {
	if len(s) >= 2 && (s[1] == '\'' || s[1] == '"') {
		q := s[1]
		end := strings.IndexByte(s[2:], q)
		if end < 0 || len(s) < 2+end+2 || s[2+end+1] != ']' {
			return nil, 0, errors.New("unterminated quoted name")
		}
		return s[2 : 2+end], 2 + end + 2, nil
	}
	end := strings.IndexByte(s, ']')
	if end < 0 {
		return nil, 0, errors.New("missing ']'")
	}
	i, err := strconv.Atoi(s[1:end])
	if err != nil || i < 0 || s[1] == '+' {
		return nil, 0, errors.New("array index must be a non-negative integer")
	}
	return i, end + 1, nil
}

// lookup follows p from v. It reports false when a step is missing or has the
// wrong kind (a key into a non-object, an index into a non-array).
func (p jsonPath) lookup(v any) (any, bool) {
	for _, e := range p {
		switch e := e.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				return nil, false
			}
			if v, ok = m[e]; !ok {
				return nil, false
			}
		case int:
			a, ok := v.([]any)
			if !ok || e >= len(a) {
				return nil, false
			}
			v = a[e]
		}
	}
	return v, true
}
