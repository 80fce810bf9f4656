package cache_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/coffer/coffer/meta"
)

// Every meta.Store method is written out on *cache.Meta rather than promoted from the
// embedded store, so that a new write method cannot bypass invalidation unnoticed.
func TestMetaMethodsExplicit(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	declared := map[string]bool{}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && receiverIs(fn, "Meta") {
				declared[fn.Name.Name] = true
			}
		}
	}
	store := reflect.TypeFor[meta.Store]()
	for i := range store.NumMethod() {
		if name := store.Method(i).Name; !declared[name] {
			t.Errorf("(*cache.Meta).%s is promoted from the wrapped store: write it out", name)
		}
	}
}

// receiverIs reports whether fn is a method on *typ.
func receiverIs(fn *ast.FuncDecl, typ string) bool {
	if fn.Recv == nil || len(fn.Recv.List) != 1 {
		return false
	}
	star, ok := fn.Recv.List[0].Type.(*ast.StarExpr)
	if !ok {
		return false
	}
	id, ok := star.X.(*ast.Ident)
	return ok && id.Name == typ
}
