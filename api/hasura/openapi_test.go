package hasura

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// TestOpenAPICoversRoutes checks that every route the mux serves is documented in
// openapi.yaml with its method, and that the spec documents no route that does not
// exist.
func TestOpenAPICoversRoutes(t *testing.T) {
	var spec struct {
		Paths map[string]map[string]any `yaml:"paths"`
	}
	if err := yaml.Unmarshal(openapiYAML, &spec); err != nil {
		t.Fatal(err)
	}
	documented := map[string]bool{}
	for path, ops := range spec.Paths {
		for method := range ops {
			if method != "parameters" {
				documented[strings.ToUpper(method)+" "+path] = true
			}
		}
	}
	src, err := os.ReadFile("handler.go")
	if err != nil {
		t.Fatal(err)
	}
	served := map[string]bool{}
	for _, m := range regexp.MustCompile(`m\.Handle(?:Func)?\("([A-Z]+) ([^"]+)"`).FindAllStringSubmatch(string(src), -1) {
		path := strings.TrimSuffix(m[2], "{$}")
		if strings.HasSuffix(m[2], "{$}") && path != "/" {
			path = strings.TrimSuffix(path, "/")
		}
		served[m[1]+" "+path] = true
	}
	if len(served) < 20 {
		t.Fatalf("found only %d routes in handler.go: the pattern no longer matches", len(served))
	}
	for r := range served {
		if !documented[r] {
			t.Errorf("route %s is served but not in openapi.yaml", r)
		}
	}
	for r := range documented {
		if !served[r] {
			t.Errorf("openapi.yaml documents %s, which is not served", r)
		}
	}
}
