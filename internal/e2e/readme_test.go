package e2e

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// readmeBlock returns the first ```sh block after heading in the README.
func readmeBlock(t *testing.T, heading string) string {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "\n"+heading+"\n")
	if !ok {
		t.Fatalf("README has no heading %q", heading)
	}
	_, rest, ok = strings.Cut(rest, "```sh\n")
	block, _, ok2 := strings.Cut(rest, "```\n")
	if !ok || !ok2 {
		t.Fatalf("README: no sh block under %q", heading)
	}
	return block
}

// TestReadmeWalkthrough runs the README's curl walkthrough, as written, against the
// built binary (only the address and the admin secret replaced) and checks that
// each command prints what its comment says.
func TestReadmeWalkthrough(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed")
	}
	block := readmeBlock(t, "## Walkthrough with curl")
	p := start(t, "COFFER_DATA_DIR="+t.TempDir())
	script := strings.NewReplacer("S=http://127.0.0.1:8000", "S="+p.url, "change-me", adminSecret).Replace(block)
	if script == block {
		t.Fatal("the walkthrough no longer sets S=http://127.0.0.1:8000 and the admin secret change-me")
	}
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", script)
	cmd.Dir = t.TempDir()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("walkthrough: %v\n%s", err, out)
	}
	// The outputs in order: upload JSON, download, HEAD headers, 206 body, 304,
	// presigned URL JSON, 204, 404.
	want := []string{`"processedfiles":[{`, "hello coffer\n", "etag: ", "\nhello", "304\n", `{"expiration":30,"url":"http`, "204\n", "404\n"}
	rest := strings.ToLower(string(out))
	for _, w := range want {
		i := strings.Index(rest, w)
		if i < 0 {
			t.Fatalf("walkthrough output lacks %q (in order) in:\n%s", w, out)
		}
		rest = rest[i+len(w):]
	}
	if !regexp.MustCompile(`(?i)content-length: 13\r?\n`).Match(out) {
		t.Errorf("HEAD: no Content-Length of hello.txt (13 bytes) in:\n%s", out)
	}
}
