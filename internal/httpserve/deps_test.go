package httpserve

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoFaceImports: the shared serving layer depends on no face, no credentials and
// no use case: it must stay usable by every face alike.
func TestNoFaceImports(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	forbidden := []string{"httpapi", "auth", "service", "api", "access", "meta", "rpcapi"}
	for _, dep := range strings.Fields(string(out)) {
		for _, f := range forbidden {
			if p := "github.com/coffer/coffer/" + f; dep == p || strings.HasPrefix(dep, p+"/") {
				t.Errorf("httpserve imports %s", dep)
			}
		}
	}
}
