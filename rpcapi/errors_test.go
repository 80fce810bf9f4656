package rpcapi

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"strings"
	"testing"

	"connectrpc.com/connect"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/internal/archtest"
	"github.com/coffer/coffer/service"
)

var _ Service = (*service.Service)(nil)

// errorKinds returns every error code constant (E...) declared in coffer's
// errors.go, read from the source so that a new kind cannot be missed.
func errorKinds(t *testing.T) map[string]string {
	f, err := parser.ParseFile(token.NewFileSet(), "../errors.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]string{}
	ast.Inspect(f, func(n ast.Node) bool {
		vs, ok := n.(*ast.ValueSpec)
		if !ok || len(vs.Values) != 1 || !strings.HasPrefix(vs.Names[0].Name, "E") {
			return true
		}
		if lit, ok := vs.Values[0].(*ast.BasicLit); ok && lit.Kind == token.STRING {
			kinds[vs.Names[0].Name], _ = strconv.Unquote(lit.Value)
		}
		return true
	})
	if len(kinds) < 13 {
		t.Fatalf("found %d error kinds in errors.go: %v", len(kinds), kinds)
	}
	return kinds
}

// TestCodeOfEveryKind: every error kind has a row in the table, only EINTERNAL maps
// to CodeInternal, and an unknown kind or a plain error is internal.
func TestCodeOfEveryKind(t *testing.T) {
	for name, code := range errorKinds(t) {
		c, ok := codeOf[code]
		if !ok {
			t.Errorf("%s (%q) has no Connect code in codeOf", name, code)
		}
		if (c == connect.CodeInternal) != (code == coffer.EINTERNAL) {
			t.Errorf("%s maps to %s", name, c)
		}
		if got := CodeOf(coffer.Errorf(code, "x")); got != c {
			t.Errorf("CodeOf(%s) = %s, want %s", name, got, c)
		}
	}
	if len(codeOf) != len(errorKinds(t)) {
		t.Errorf("codeOf has %d rows for %d kinds", len(codeOf), len(errorKinds(t)))
	}
	if CodeOf(coffer.Errorf("no_such_kind", "x")) != connect.CodeInternal || CodeOf(strconv.ErrRange) != connect.CodeInternal {
		t.Error("an unknown kind must be internal")
	}
}

// TestFaceImports: the face reaches storage only through the service: it imports no
// metadata store, blob store, cache or driver, and no other face.
func TestFaceImports(t *testing.T) {
	archtest.ImportsNone(t, "the RPC face", "meta", "blob", "cache", "api")
}
