//go:build !novips

package vips

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/imaging"
	"github.com/coffer/coffer/imaging/imagingtest"
)

// bomb is one hostile source and the error code its transform must give ("" = it
// must succeed).
type bomb struct {
	name string
	data []byte
	code string
}

// bombCorpus returns sources that declare huge sizes or frame counts in a few bytes,
// and zero-filled images just within the limits that decompress to ~49 MB.
func bombCorpus(t testing.TB) []bomb {
	jpg := encodeJPEG(gradient(16, 16, false, 4), 80)
	return []bomb{
		{"png-100000x100000", imagingtest.PNG(100000, 100000, false, 2), coffer.ETOOLARGE},
		{"jpeg-65000x65000", mustPatch(t, jpg, 65000, 65000), coffer.ETOOLARGE},
		{"gif-1000-frames", imagingtest.AnimatedGIF(1, 1, 1000), coffer.ETOOLARGE},
		{"gif-screen-65535x65535", imagingtest.PatchGIFScreen(imagingtest.AnimatedGIF(1, 1, 1), 65535, 65535), ""}, // libnsgif sizes by the frame
		{"webp-16383x16383", patchWebPSize(t, testSources(t).webp, 16383, 16383), coffer.ETOOLARGE},
		{"svg-huge-viewbox", []byte(`<svg xmlns="http://www.w3.org/2000/svg" width="1000000" height="1000000" viewBox="0 0 1000000 1000000"><rect width="100%" height="100%"/></svg>`), coffer.EUNSUPPORTED},
		{"png-7000x7000-zeros", imagingtest.PNG(7000, 7000, false, 0), ""},
		{"png-7000x7000-zeros-interlaced", imagingtest.PNG(7000, 7000, true, 0), ""},
	}
}

// mustPatch is imagingtest.PatchJPEGSize, failing t on a JPEG without SOF0.
func mustPatch(t testing.TB, jpg []byte, w, h uint16) []byte {
	out, err := imagingtest.PatchJPEGSize(jpg, w, h)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// patchWebPSize rewrites the frame size in the VP8 chunk of a lossy WebP, and the
// canvas size in its VP8X chunk if it has one.
func patchWebPSize(t testing.TB, w []byte, width, height uint16) []byte {
	out := bytes.Clone(w)
	i := bytes.Index(out, []byte("VP8 "))
	if i < 0 || !bytes.Equal(out[i+11:i+14], []byte{0x9d, 0x01, 0x2a}) {
		t.Fatalf("not a lossy WebP: % x", out[:min(len(out), 40)])
	}
	binary.LittleEndian.PutUint16(out[i+14:], width&0x3fff)
	binary.LittleEndian.PutUint16(out[i+16:], height&0x3fff)
	if x := bytes.Index(out, []byte("VP8X")); x >= 0 {
		put24 := func(b []byte, v uint32) { b[0], b[1], b[2] = byte(v), byte(v>>8), byte(v>>16) }
		put24(out[x+12:], uint32(width)-1)
		put24(out[x+15:], uint32(height)-1)
	}
	return out
}

const bombDirEnv = "COFFER_VIPS_BOMB_DIR"

// TestBombCorpus runs the corpus in a child process and checks each result, that
// each source is dealt with quickly, and the child's peak RSS.
func TestBombCorpus(t *testing.T) {
	if os.Getenv(bombDirEnv) != "" {
		t.Skip("in the child")
	}
	dir := t.TempDir()
	corpus := bombCorpus(t)
	for _, b := range corpus {
		if err := os.WriteFile(filepath.Join(dir, b.name), b.data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestBombChild$", "-test.v")
	cmd.Env = append(os.Environ(), bombDirEnv+"="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	results := parseBombResults(string(out))
	for _, b := range corpus {
		r, ok := results[b.name]
		switch {
		case !ok:
			t.Errorf("%s: no result from the child\n%s", b.name, out)
		case r.code != b.code:
			t.Errorf("%s: code %q (%s), want %q", b.name, r.code, r.msg, b.code)
		case r.elapsed > 3*time.Second:
			t.Errorf("%s: took %v", b.name, r.elapsed)
		}
		t.Logf("%-32s %-18q %6.1f ms  %s", b.name, r.code, float64(r.elapsed.Microseconds())/1000, r.msg)
	}
	maxRSS := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss >> 10 // KiB to MiB
	t.Logf("child peak RSS %d MiB", maxRSS)
	if maxRSS >= 256 {
		t.Errorf("child peak RSS %d MiB, want < 256", maxRSS)
	}
}

type bombResult struct {
	code, msg string
	elapsed   time.Duration
}

// parseBombResults reads the child's "BOMB name code micros message" lines.
func parseBombResults(out string) map[string]bombResult {
	results := map[string]bombResult{}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		f := strings.SplitN(sc.Text(), "\t", 5)
		if len(f) != 5 || f[0] != "BOMB" {
			continue
		}
		us, _ := strconv.ParseInt(f[3], 10, 64)
		results[f[1]] = bombResult{code: f[2], msg: f[4], elapsed: time.Duration(us) * time.Microsecond}
	}
	return results
}

// TestBombChild transforms every file of the corpus directory to w=100 and prints
// the outcome; it runs only as TestBombCorpus's child.
func TestBombChild(t *testing.T) {
	dir := os.Getenv(bombDirEnv)
	if dir == "" {
		t.Skip("run by TestBombCorpus")
	}
	e := newEngine(t, imaging.DefaultConfig())
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, 0, len(entries))
	for _, en := range entries {
		names = append(names, en.Name())
	}
	slices.Sort(names)
	for _, name := range names {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		_, err = transform(t, e, data, imaging.Options{Width: 100})
		code := ""
		if err != nil {
			code = coffer.ErrorCode(err)
		}
		msg := strings.ReplaceAll(fmt.Sprint(err), "\n", " ")
		fmt.Printf("BOMB\t%s\t%s\t%d\t%s\n", name, code, time.Since(start).Microseconds(), msg)
	}
}
