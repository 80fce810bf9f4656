package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestServeScriptAnnouncesSteps runs scripts/serve.sh --help into a temporary bin
// directory: before the (possibly minutes long) build it says on stderr what it is
// doing, and it then starts the server it built.
func TestServeScriptAnnouncesSteps(t *testing.T) {
	bin := t.TempDir()
	cmd := exec.Command(filepath.Join("..", "..", "scripts", "serve.sh"), "--help")
	cmd.Env = append(os.Environ(), "COFFER_BIN_DIR="+bin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("serve.sh --help: %v\n%s", err, stderr.String())
	}
	for _, want := range []string{
		"serve.sh: building coffer and coffer-imager into " + bin,
		"build.sh: go build coffer (pure Go) -> " + bin + "/coffer",
		"serve.sh: built in ",
		"starting " + bin + "/coffer serve",
	} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
	if !strings.Contains(stdout.String(), "--listen") {
		t.Errorf("the built server's help was not printed:\n%s", stdout.String())
	}
	if _, err := os.Stat(filepath.Join(bin, "coffer")); err != nil {
		t.Errorf("coffer not built into COFFER_BIN_DIR: %v", err)
	}
}
