package imagerpc

import (
	"bytes"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
)

var update = flag.Bool("update", false, "rewrite imagerpc.pb.go from imagerpc.proto")

// protocVersion matches the header line that names protoc's version, the one line of
// the output that depends on protoc rather than on the .proto and protoc-gen-go.
var protocVersion = regexp.MustCompile(`(?m)^// \tprotoc +\S+\n`)

// TestGeneratedCodeIsUpToDate regenerates imagerpc.pb.go into a temporary directory
// and fails if the checked-in file differs (with -update it rewrites it instead).
// protoc-gen-go is built from go.mod's google.golang.org/protobuf, so its version
// is pinned there. Without protoc the test skips, except under CI (CI=true) or
// COFFER_TEST_REQUIRE_SERVICES, where it fails: scripts/test.sh installs it.
func TestGeneratedCodeIsUpToDate(t *testing.T) {
	protoc := protocPath(t)
	dir := t.TempDir()
	plugin := filepath.Join(dir, "protoc-gen-go")
	build := exec.Command("go", "build", "-o", plugin, "google.golang.org/protobuf/cmd/protoc-gen-go")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building protoc-gen-go: %v\n%s", err, out)
	}
	gen := exec.Command(protoc, "--plugin=protoc-gen-go="+plugin, "--go_out="+dir,
		"--go_opt=paths=source_relative", "imagerpc.proto")
	if out, err := gen.CombinedOutput(); err != nil {
		t.Fatalf("protoc: %v\n%s", err, out)
	}
	want, err := os.ReadFile(filepath.Join(dir, "imagerpc.pb.go"))
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile("imagerpc.pb.go", want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := os.ReadFile("imagerpc.pb.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(protocVersion.ReplaceAll(got, nil), protocVersion.ReplaceAll(want, nil)) {
		t.Fatal("imagerpc.pb.go is not what imagerpc.proto generates: run go generate ./imaging/remote/imagerpc")
	}
}

// protocPath finds protoc, or skips (fails under CI) without it.
func protocPath(t *testing.T) string {
	if p, err := exec.LookPath("protoc"); err == nil {
		return p
	}
	if os.Getenv("CI") == "true" || os.Getenv("COFFER_TEST_REQUIRE_SERVICES") != "" {
		t.Fatal("protoc is required (scripts/test.sh installs Debian's protobuf-compiler)")
	}
	t.Skip("protoc is not installed (apt-get install protobuf-compiler; scripts/test.sh does)")
	return ""
}
