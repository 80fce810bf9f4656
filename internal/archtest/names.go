package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// NamesNone fails t if a non-test Go file of the package in the current directory
// has a string literal or an identifier containing one of words (any case); comments
// may name them. who names the package in the failures, each with its position.
func NamesNone(t *testing.T, who string, words ...string) {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no Go files here (%v)", err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatalf("parse %s: %v", name, err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			var s, kind string
			switch n := n.(type) {
			case *ast.BasicLit:
				s, kind = n.Value, "string"
				if n.Kind != token.STRING {
					return true
				}
			case *ast.Ident:
				s, kind = n.Name, "identifier"
			default:
				return true
			}
			if w := containsAny(s, words); w != "" {
				t.Errorf("%s: %s %s %s names %q", fset.Position(n.Pos()), who, kind, s, w)
			}
			return true
		})
	}
}

// containsAny returns the first of words that s contains in any case, "" if none.
func containsAny(s string, words []string) string {
	s = strings.ToLower(s)
	for _, w := range words {
		if strings.Contains(s, strings.ToLower(w)) {
			return w
		}
	}
	return ""
}
