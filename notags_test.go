package coffer_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// TestDomainTypesHaveNoJSONTags keeps wire formats out of the domain: the types of
// the root package and of service carry no json tags; each format's DTOs live in
// the package that speaks it (api/hasura, webhook/payload). It reads the source, so
// it covers every struct, exported or not, nested or not.
func TestDomainTypesHaveNoJSONTags(t *testing.T) {
	for _, dir := range []string{".", "service"} {
		files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		n := 0
		for _, name := range files {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			n++
			ast.Inspect(f, func(node ast.Node) bool {
				if field, ok := node.(*ast.Field); ok && field.Tag != nil {
					tag, _ := strconv.Unquote(field.Tag.Value)
					if _, ok := reflect.StructTag(tag).Lookup("json"); ok {
						t.Errorf("%s: json tag %s on a domain type: move the wire format to a DTO", fset.Position(field.Pos()), field.Tag.Value)
					}
				}
				return true
			})
		}
		if n == 0 {
			t.Fatalf("no source files read in %s", dir)
		}
	}
}
