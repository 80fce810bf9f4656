package archtest

import (
	"os/exec"
	"strings"
	"testing"
)

// DependsOnlyOn fails t if the package in the current directory depends, directly or
// not (tests aside), on a package outside the standard library that allowed does not
// list: an import path, or a path ending in "/..." for it and every package below.
// who names the package in the failures.
func DependsOnlyOn(t *testing.T, who string, allowed ...string) {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", "-f", `{{if not .Standard}}{{.ImportPath}}{{end}}`, ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) == 0 {
		t.Fatal("go list named no packages")
	}
	for _, dep := range deps[:len(deps)-1] { // the package itself comes last
		if !allows(allowed, dep) {
			t.Errorf("%s depends on %s, which is not among %v", who, dep, allowed)
		}
	}
}

// allows reports whether p is one of paths, or below one ending in "/...".
func allows(paths []string, p string) bool {
	for _, a := range paths {
		if tree, ok := strings.CutSuffix(a, "/..."); ok && under(p, []string{tree}) || a == p {
			return true
		}
	}
	return false
}
