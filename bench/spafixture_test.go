package bench

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/andybalholm/brotli"
)

func TestDefaultSPA(t *testing.T) {
	m := DefaultSPA(1)
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	var bundle, assets int64
	for _, f := range m.Bundle {
		bundle += f.Size
	}
	for _, f := range m.Assets {
		assets += f.Size
		if f.Size < spaAssetMin || f.Size > spaAssetMax {
			t.Errorf("asset %s: %d bytes, want 0.5 to 8 MB", f.Path, f.Size)
		}
	}
	if len(m.Bundle) != 13 || m.Bundle[0].Path != "index.html" || bundle < 3.5e6 || bundle > 5e6 || len(m.Assets) != 20 {
		t.Errorf("bundle of %d files, %d bytes; %d assets: want index.html + 12 files of ~4 MB and 20 assets", len(m.Bundle), bundle, len(m.Assets))
	}
	if n := DefaultSPA(1); !slices.Equal(n.Bundle, m.Bundle) || !slices.Equal(n.Assets, m.Assets) {
		t.Error("the same seed gave another manifest")
	}
	if o := DefaultSPA(2); o.Bundle[1].Path == m.Bundle[1].Path {
		t.Error("another seed gave the same names")
	}
	l := m.Largest(10)
	if len(l) != 10 || !slices.IsSortedFunc(l, func(a, b SPAFile) int { return int(b.Size - a.Size) }) {
		t.Errorf("Largest(10) = %v", l)
	}
	for _, f := range m.Assets {
		if f.Size > l[9].Size && !slices.Contains(l, f) {
			t.Errorf("%v is larger than the 10th largest and missing", f)
		}
	}
}

func TestSPAManifestValidate(t *testing.T) {
	for _, p := range []string{"../x", "/abs", "a?b", "a#b", "a%2e", "a b", ""} {
		m := SPAManifest{Bundle: []SPAFile{{"index.html", 1}}, Assets: []SPAFile{{p, 1}}}
		if err := m.Validate(); err == nil {
			t.Errorf("%q: no error", p)
		}
	}
	if _, err := ReadSPAManifest(strings.NewReader(`{"bundle":[]}`)); err == nil {
		t.Error("an empty manifest read without error")
	}
}

// TestWriteSPAFixture writes a small fixture and checks sizes, the siblings' bytes,
// the index page, compressibility and that a second write keeps the files.
func TestWriteSPAFixture(t *testing.T) {
	dir := t.TempDir()
	m := SPAManifest{Seed: 3, Bundle: []SPAFile{{"index.html", 1500}, {"assets/app-1.js", 300_000}, {"assets/app-2.css", 50_000}},
		Assets: []SPAFile{{"img/a.jpg", 70_000}, {"media/b.mp4", 120_000}}}
	if err := WriteSPAFixture(dir, m, io.Discard); err != nil {
		t.Fatal(err)
	}
	for _, f := range slices.Concat(m.Bundle, m.Assets) {
		b, err := os.ReadFile(filepath.Join(dir, f.Path))
		if err != nil || int64(len(b)) != f.Size {
			t.Fatalf("%s: %d bytes, %v; want %d", f.Path, len(b), err, f.Size)
		}
		gz, _ := os.ReadFile(filepath.Join(dir, f.Path+".gz"))
		if slices.Contains(m.Assets, f) {
			if len(gz) != 0 {
				t.Errorf("asset %s has a .gz sibling", f.Path)
			}
			continue
		}
		checkSiblings(t, dir, f.Path, b, gz)
	}
	index, _ := os.ReadFile(filepath.Join(dir, "index.html"))
	if !bytes.Contains(index, []byte(`src="/assets/app-1.js"`)) || !bytes.Contains(index, []byte(`href="/assets/app-2.css"`)) {
		t.Errorf("index.html does not load the bundle:\n%.400s", index)
	}
	mf, err := os.Open(filepath.Join(dir, SPAManifestName))
	if err != nil {
		t.Fatal(err)
	}
	defer mf.Close()
	if got, err := ReadSPAManifest(mf); err != nil || !slices.Equal(got.Assets, m.Assets) {
		t.Errorf("manifest read back: %+v, %v", got, err)
	}
	before, _ := os.Stat(filepath.Join(dir, "assets/app-1.js.br"))
	time.Sleep(10 * time.Millisecond)
	if err := WriteSPAFixture(dir, m, io.Discard); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.Stat(filepath.Join(dir, "assets/app-1.js.br")); !after.ModTime().Equal(before.ModTime()) {
		t.Error("a second write rewrote a complete file")
	}
	// Another manifest (a new generator version): files of the right size are rewritten.
	asset := filepath.Join(dir, "img/a.jpg")
	want, _ := os.ReadFile(asset)
	if err := os.WriteFile(asset, make([]byte, len(want)), 0o644); err != nil {
		t.Fatal(err)
	}
	m.Version++
	if err := WriteSPAFixture(dir, m, io.Discard); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(asset); !bytes.Equal(got, want) {
		t.Error("a new manifest kept a file of the right size but other bytes")
	}
}

// checkSiblings checks that path's .gz and .br siblings decode to plain, and that
// JS and CSS compress like a real bundle (gzip to under 40 %).
func checkSiblings(t *testing.T, dir, path string, plain, gz []byte) {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		t.Fatalf("%s.gz: %v", path, err)
	}
	if got, err := io.ReadAll(zr); err != nil || !bytes.Equal(got, plain) {
		t.Errorf("%s.gz decodes to %d other bytes, %v", path, len(got), err)
	}
	br, _ := os.ReadFile(filepath.Join(dir, path+".br"))
	if got, err := io.ReadAll(brotli.NewReader(bytes.NewReader(br))); err != nil || !bytes.Equal(got, plain) {
		t.Errorf("%s.br decodes to %d other bytes, %v", path, len(got), err)
	}
	if path != "index.html" && (len(gz)*10 > len(plain)*4 || len(br) >= len(gz)) {
		t.Errorf("%s: %d bytes, gzip %d, brotli %d: want gzip under 40 %% and brotli smaller", path, len(plain), len(gz), len(br))
	}
}

// TestSPACodeGolden pins the generated text: fixture directories written by an
// earlier build must keep the same bytes.
func TestSPACodeGolden(t *testing.T) {
	h := sha256.New()
	if err := writeCode(h, "assets/x.js", 1, 100_000); err != nil {
		t.Fatal(err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != "90bf0526e1d95511531b73b61afee18166b0c912c3b24b687a29d52937b13ce3" {
		t.Errorf("sha256 %s", got)
	}
}

func TestProcTree(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Skip("no sleep command:", err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	if tree := procTree(os.Getpid()); tree[0] != os.Getpid() || !slices.Contains(tree, cmd.Process.Pid) {
		t.Errorf("procTree = %v, want this process and its child %d", tree, cmd.Process.Pid)
	}
	own, _, _, err1 := procOne(os.Getpid())
	all, _, _, err2 := procSample(os.Getpid())
	if err1 != nil || err2 != nil || all <= own {
		t.Errorf("RSS alone %d, with the child %d (%v, %v): want the child's added", own, all, err1, err2)
	}
}

// FuzzReadSPAManifest: a manifest fetched from the site under test never panics the
// reader, and one it accepts names only files below the site root.
func FuzzReadSPAManifest(f *testing.F) {
	good, _ := json.Marshal(DefaultSPA(1))
	f.Add(good)
	f.Add([]byte(`{"bundle":[{"path":"../etc/passwd","size":1}],"assets":[{"path":"a","size":1}]}`))
	f.Add([]byte(`{"bundle":[{"path":"a","size":-1}],"assets":[]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := ReadSPAManifest(bytes.NewReader(b))
		if err != nil {
			return
		}
		for _, p := range spaWalk(&m) {
			if !filepath.IsLocal(p) || strings.ContainsAny(p, "?#") {
				t.Fatalf("accepted path %q", p)
			}
		}
	})
}
