package bench

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"image/jpeg"
	"io"
	"os"
	"path/filepath"
	"testing"
	"testing/iotest"
)

func TestPatternReader(t *testing.T) {
	tests := []struct {
		name string
		size int64
	}{{"empty", 0}, {"one", 1}, {"below a block", patternBlock - 3}, {"three blocks and a bit", 3*patternBlock + 17}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, err := io.ReadAll(newPatternReader("seed", tc.size))
			if err != nil || int64(len(a)) != tc.size {
				t.Fatalf("read %d bytes, %v; want %d", len(a), err, tc.size)
			}
			// Same seed, odd read sizes: same bytes (iotest.TestReader checks the io.Reader contract).
			if err := iotest.TestReader(newPatternReader("seed", tc.size), a); err != nil {
				t.Error(err)
			}
			b, _ := io.ReadAll(io.LimitReader(newPatternReader("other", tc.size), tc.size))
			if tc.size > 8 && bytes.Equal(a, b) {
				t.Error("different seeds gave equal content")
			}
		})
	}
	big, _ := io.ReadAll(newPatternReader("x", 2*patternBlock))
	if bytes.Equal(big[:patternBlock], big[patternBlock:]) {
		t.Error("consecutive blocks are equal")
	}
}

// TestPatternGolden pins the generated content: fixture directories written by an
// earlier build and the files a server already holds must stay the same bytes.
func TestPatternGolden(t *testing.T) {
	for _, tc := range []struct {
		size int64
		sum  string
	}{
		{100000, "0275028d7b9f2029f83903d2d2fb168572eaa2983e1b49b605d8e2992059ed4d"},
		{3*patternBlock + 17, "73aea9bb8f49d50abe1197d9241c149434d91a8552da597a1451df58720a8dd5"},
	} {
		h := sha256.New()
		if _, err := io.Copy(h, newPatternReader("bench-small-100KB.bin", tc.size)); err != nil {
			t.Fatal(err)
		}
		if got := hex.EncodeToString(h.Sum(nil)); got != tc.sum {
			t.Errorf("%d bytes: sha256 %s, want %s", tc.size, got, tc.sum)
		}
	}
}

func TestImageFixtureIsAJPEG(t *testing.T) {
	r := newJPEGReader()
	cfg, err := jpeg.DecodeConfig(r)
	r.Close() // stops the encoder early
	if err != nil || cfg.Width != imageWidth || cfg.Height != imageHeight {
		t.Fatalf("config %+v, %v", cfg, err)
	}
}

func TestWriteFixtures(t *testing.T) {
	dir := t.TempDir()
	scs, err := SelectScenarios([]string{"download_small_file", "upload_large_file"}, true)
	if err != nil {
		t.Fatal(err)
	}
	if err := writeFixtures(dir, scs, io.Discard); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || entries[0].Name() != scs[0].Fixture.Name {
		t.Fatalf("dir holds %v, want only the download fixture", entries)
	}
	got, _ := os.ReadFile(filepath.Join(dir, scs[0].Fixture.Name))
	want, _ := io.ReadAll(scs[0].Fixture.Open())
	if !bytes.Equal(got, want) {
		t.Error("fixture file differs from the generated content")
	}
}

func TestSelectScenarios(t *testing.T) {
	tests := []struct {
		names   []string
		uploads bool
		want    int
		wantErr string
	}{
		{[]string{"all"}, true, 7, ""},
		{[]string{"all"}, false, 5, ""},
		{[]string{"upload_small_file", "download_image"}, true, 2, ""},
		{[]string{"nope"}, true, 0, "unknown scenario \"nope\""},
		{[]string{"upload_large_file"}, false, 0, "needs --target"},
		{nil, true, 0, "no scenario"},
	}
	for _, tc := range tests {
		got, err := SelectScenarios(tc.names, tc.uploads)
		if tc.wantErr != "" {
			if err == nil || !bytes.Contains([]byte(err.Error()), []byte(tc.wantErr)) {
				t.Errorf("%v: error %v, want %q", tc.names, err, tc.wantErr)
			}
			continue
		}
		if err != nil || len(got) != tc.want {
			t.Errorf("%v: %d scenarios, %v; want %d", tc.names, len(got), err, tc.want)
		}
	}
}
