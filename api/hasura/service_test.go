package hasura_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/coffer/coffer/api/hasura"
	"github.com/coffer/coffer/service"
)

// The service implements every use case the face consumes.
var _ hasura.Service = (*service.Service)(nil)

// TestFaceImports: the face reaches storage only through the service: it imports no
// metadata store, blob store, cache or driver (its tests may, to build a server).
func TestFaceImports(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{join .Imports "\n"}}`, ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	imports := strings.Fields(string(out))
	if len(imports) == 0 {
		t.Fatal("go list named no imports")
	}
	for _, dep := range imports {
		for _, f := range []string{"meta", "blob", "cache"} {
			if p := "github.com/coffer/coffer/" + f; dep == p || strings.HasPrefix(dep, p+"/") {
				t.Errorf("the hasura face imports %s", dep)
			}
		}
	}
}
