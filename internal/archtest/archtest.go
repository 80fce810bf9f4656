// Package archtest checks the direction of dependencies in tests: which coffer
// packages a package may import.
package archtest

import (
	"go/parser"
	"go/token"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// ImportsNone fails t if the package in the current directory imports (directly)
// any coffer package under one of forbidden ("meta" forbids meta and meta/...).
// who names the package in the failures.
func ImportsNone(t *testing.T, who string, forbidden ...string) {
	t.Helper()
	full := make([]string, len(forbidden))
	for i, f := range forbidden {
		full[i] = "github.com/coffer/coffer/" + f
	}
	ImportsNoneOf(t, who, full...)
}

// ImportsNoneOf fails t if the package in the current directory imports (directly)
// a package under one of forbidden, full import paths of any module
// ("google.golang.org/protobuf/encoding/protojson"). who names the package in the
// failures.
func ImportsNoneOf(t *testing.T, who string, forbidden ...string) {
	t.Helper()
	for _, dep := range list(t, "Imports") {
		if under(dep, forbidden) {
			t.Errorf("%s imports %s", who, dep)
		}
	}
}

// DependsOnNone fails t if the package in the current directory depends, directly or
// through any package it imports (tests aside), on a package under one of forbidden,
// full import paths ("github.com/jackc/pgx" forbids every pgx package, of any major
// version). who names the package in the failures, each with the import chain that
// brings the dependency in.
func DependsOnNone(t *testing.T, who string, forbidden ...string) {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	imports := map[string][]string{} // every dependency's direct imports
	var self string                  // the package itself: go list -deps names it last
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) > 0 {
			self, imports[f[0]] = f[0], f[1:]
		}
	}
	if len(imports) < 2 {
		t.Fatal("go list named no dependencies")
	}
	for _, chain := range chainsTo(self, imports, forbidden) {
		t.Errorf("%s depends on %s", who, strings.Join(chain, " → "))
	}
}

// chainsTo returns, for each forbidden package reachable from root in imports, one
// import chain from root to it (breadth first: a shortest one).
func chainsTo(root string, imports map[string][]string, forbidden []string) [][]string {
	from := map[string]string{root: ""}
	queue := []string{root}
	var chains [][]string
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if p != root && under(p, forbidden) {
			chain := []string{}
			for q := p; q != ""; q = from[q] {
				chain = append([]string{q}, chain...)
			}
			chains = append(chains, chain)
			continue // one chain per forbidden package reached first
		}
		for _, d := range imports[p] {
			if _, seen := from[d]; !seen {
				from[d] = p
				queue = append(queue, d)
			}
		}
	}
	return chains
}

// under reports whether p is one of paths or below one of them.
func under(p string, paths []string) bool {
	for _, f := range paths {
		if p == f || strings.HasPrefix(p, f+"/") {
			return true
		}
	}
	return false
}

// ImportedOnlyIn fails t if a file of the package in the current directory (tests
// aside) other than those named in files imports a package under pkg, a full
// import path: the one place a package meets another ("app meets the hasura face
// in its faces list only"). who names the package in the failures.
func ImportedOnlyIn(t *testing.T, who, pkg string, files ...string) {
	t.Helper()
	for _, name := range list(t, "GoFiles") {
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, spec := range f.Imports {
			if dep, _ := strconv.Unquote(spec.Path.Value); under(dep, []string{pkg}) && !slices.Contains(files, name) {
				t.Errorf("%s: %s imports %s (only %s may)", who, name, dep, strings.Join(files, ", "))
			}
		}
	}
}

// list returns field, a list of the package in the current directory as go list
// names it ("Imports", "GoFiles"), failing t if it is empty.
func list(t *testing.T, field string) []string {
	t.Helper()
	out, err := exec.Command("go", "list", "-f", `{{join .`+field+` "\n"}}`, ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	items := strings.Fields(string(out))
	if len(items) == 0 {
		t.Fatalf("go list named no %s", field)
	}
	return items
}
