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
	out, err := exec.Command("go", "list", "-f", `{{join .Imports "\n"}}`, ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	imports := strings.Fields(string(out))
	if len(imports) == 0 {
		t.Fatal("go list named no imports")
	}
	for _, dep := range imports {
		for _, f := range forbidden {
			if p := "github.com/coffer/coffer/" + f; dep == p || strings.HasPrefix(dep, p+"/") {
				t.Errorf("%s imports %s", who, dep)
			}
		}
	}
}
