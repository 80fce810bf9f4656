// Package archtest checks the direction of dependencies in tests: which coffer
// packages a package may import.
package archtest

import (
	"os/exec"
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
	out, err := exec.Command("go", "list", "-f", `{{join .Imports "\n"}}`, ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	imports := strings.Fields(string(out))
	if len(imports) == 0 {
		t.Fatal("go list named no imports")
	}
	for _, dep := range imports {
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
