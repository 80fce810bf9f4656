package proto

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestBufScriptFindsBreakingChanges runs scripts/buf.sh in a scratch git repository
// holding the contract: a commit that deletes a field fails it, in the full clone
// and in a shallow clone of depth 1 (CI's usual checkout: the script fetches the
// previous commit); a shallow clone that cannot fetch it passes with NOT COMPARED.
func TestBufScriptFindsBreakingChanges(t *testing.T) {
	buf := bufPath(t)
	repo := filepath.Join(t.TempDir(), "repo")
	copyContract(t, repo)
	git(t, repo, "init", "-q")
	git(t, repo, "add", ".")
	git(t, repo, "commit", "-qm", "contract")
	env := append(os.Environ(), "PATH="+filepath.Dir(buf)+string(os.PathListSeparator)+os.Getenv("PATH"), "CI=", "COFFER_TEST_REQUIRE_SERVICES=")
	if out, err := runBuf(repo, env); err != nil {
		t.Fatalf("buf.sh on the first commit: %v\n%s", err, out)
	}
	files := filepath.Join(repo, "proto", "coffer", "admin", "v1", "files.proto")
	b, err := os.ReadFile(files)
	if err != nil {
		t.Fatal(err)
	}
	dropped := strings.Replace(string(b), "  string prefix = 2;\n", "", 1)
	if dropped == string(b) {
		t.Fatal("files.proto has no field prefix = 2 to delete: update this test")
	}
	if err := os.WriteFile(files, []byte(dropped), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, repo, "commit", "-qam", "delete ListFilesRequest.prefix")
	shallow := filepath.Join(t.TempDir(), "shallow")
	git(t, "", "clone", "-q", "--depth", "1", "file://"+repo, shallow)
	for _, dir := range []string{repo, shallow} {
		out, err := runBuf(dir, env)
		if err == nil || !strings.Contains(out, `"prefix"`) {
			t.Errorf("buf.sh in %s passed a deleted field (%v):\n%s", filepath.Base(dir), err, out)
		}
	}
	cut := filepath.Join(t.TempDir(), "cut")
	git(t, "", "clone", "-q", "--depth", "1", "file://"+repo, cut)
	git(t, cut, "remote", "remove", "origin")
	if out, err := runBuf(cut, append(env, "CI=true")); err != nil || !strings.Contains(out, "NOT COMPARED") {
		t.Errorf("buf.sh without the previous commit: %v, want a pass that says NOT COMPARED:\n%s", err, out)
	}
}

// copyContract copies scripts/buf.sh, buf.yaml and the .proto files into repo.
func copyContract(t *testing.T, repo string) {
	t.Helper()
	copyFile(t, filepath.Join("..", "scripts", "buf.sh"), filepath.Join(repo, "scripts", "buf.sh"), 0o755)
	err := filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || (path != "buf.yaml" && filepath.Ext(path) != ".proto") {
			return err
		}
		copyFile(t, path, filepath.Join(repo, "proto", path), 0o644)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// copyFile copies src to dst, making dst's directory.
func copyFile(t *testing.T, src, dst string, mode os.FileMode) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err == nil {
		err = os.MkdirAll(filepath.Dir(dst), 0o755)
	}
	if err == nil {
		err = os.WriteFile(dst, b, mode)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// git runs git with args in dir (or here, if dir is ""), failing t on error.
func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=test", "-c", "user.email=test@example.invalid"}, args...)...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// runBuf runs scripts/buf.sh in repo with env and returns its output.
func runBuf(repo string, env []string) (string, error) {
	cmd := exec.Command(filepath.Join(repo, "scripts", "buf.sh"))
	cmd.Dir, cmd.Env = repo, env
	out, err := cmd.CombinedOutput()
	return string(out), err
}
