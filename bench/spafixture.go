package bench

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
)

// SPAManifestName is the file, at the root of an SPA fixture, that lists its bundle
// and assets; the spa_site scenario reads it from --fixtures-dir or GETs it from the
// site.
const SPAManifestName = "spa-manifest.json"

// SPAFile is one file of an SPA fixture: its path below the site root (no leading
// slash) and size in bytes (uncompressed).
type SPAFile struct {
	Path string `json:"path"`
	Size int64  `json:"size"`
}

// SPAManifest describes an SPA fixture: the bundle in the order a browser loads it
// (index.html first) and the large assets (images, video, fonts) in any order.
// Bundle files other than index.html have precompressed ".gz" and ".br" siblings.
type SPAManifest struct {
	Seed   uint64    `json:"seed"`
	Bundle []SPAFile `json:"bundle"`
	Assets []SPAFile `json:"assets"`
}

// Largest returns the n largest assets, largest first (ties by path).
func (m *SPAManifest) Largest(n int) []SPAFile {
	a := slices.Clone(m.Assets)
	slices.SortStableFunc(a, func(x, y SPAFile) int {
		if x.Size != y.Size {
			return int(y.Size - x.Size)
		}
		return strings.Compare(x.Path, y.Path)
	})
	return a[:min(n, len(a))]
}

// Validate checks that m lists a bundle and assets with safe relative paths.
func (m *SPAManifest) Validate() error {
	if len(m.Bundle) == 0 || len(m.Assets) == 0 {
		return fmt.Errorf("spa manifest: want a bundle and assets, got %d and %d files", len(m.Bundle), len(m.Assets))
	}
	for _, f := range slices.Concat(m.Bundle, m.Assets) {
		if !filepath.IsLocal(f.Path) || strings.ContainsAny(f.Path, "\\?#% \r\n") || f.Size < 0 {
			return fmt.Errorf("spa manifest: bad file %q (size %d): want a relative path without ?, # or %%", f.Path, f.Size)
		}
	}
	return nil
}

// bundleShape is one bundle file of the default SPA: a name stem, an extension and a
// nominal size (each file's size varies ±5 % with the seed). They add up to about
// 4.3 MB, like the bundle of a large single-page application.
var bundleShape = []struct {
	stem, ext string
	size      int64
}{
	{"index", "js", 1_450_000}, {"vendor", "js", 760_000}, {"index", "css", 210_000},
	{"editor", "js", 420_000}, {"charts", "js", 330_000}, {"router", "js", 280_000},
	{"i18n", "js", 220_000}, {"forms", "js", 180_000}, {"vendor", "css", 110_000},
	{"dashboard", "js", 150_000}, {"settings", "js", 120_000}, {"polyfills", "js", 90_000},
}

// spaAssetCount is how many large assets the default SPA has; their sizes spread
// log-uniformly over [spaAssetMin, spaAssetMax].
const (
	spaAssetCount = 20
	spaAssetMin   = 500_000
	spaAssetMax   = 8_000_000
	spaIndexSize  = 2_000
)

// spaAssetKinds are the assets' directories and extensions, used in turn.
var spaAssetKinds = [][2]string{{"img", "jpg"}, {"img", "webp"}, {"media", "mp4"}, {"img", "png"}, {"fonts", "woff2"}}

// DefaultSPA returns the manifest of the SPA fixture generated from seed: index.html,
// 12 hashed JS/CSS files and 20 assets of 0.5 to 8 MB. The same seed always gives the
// same names, sizes and (see WriteSPAFixture) bytes.
func DefaultSPA(seed uint64) SPAManifest {
	rng := rand.New(rand.NewPCG(seed, 0x737061))
	m := SPAManifest{Seed: seed, Bundle: []SPAFile{{Path: "index.html", Size: spaIndexSize}}}
	for _, b := range bundleShape {
		size := b.size + int64(float64(b.size)*(rng.Float64()-0.5)/10)
		name := fmt.Sprintf("assets/%s-%08x.%s", b.stem, rng.Uint32(), b.ext)
		m.Bundle = append(m.Bundle, SPAFile{Path: name, Size: size})
	}
	for i := range spaAssetCount {
		k := spaAssetKinds[i%len(spaAssetKinds)]
		size := math.Exp(math.Log(spaAssetMin) + rng.Float64()*(math.Log(spaAssetMax)-math.Log(spaAssetMin)))
		name := fmt.Sprintf("%s/asset%02d-%08x.%s", k[0], i, rng.Uint32(), k[1])
		m.Assets = append(m.Assets, SPAFile{Path: name, Size: int64(size)})
	}
	return m
}

// WriteSPAFixture writes the files of m (from DefaultSPA) under dir: index.html
// naming the bundle, the bundle as compressible JS/CSS-like text with ".gz" and ".br"
// siblings, the assets as incompressible bytes, and the manifest itself. A file that
// already exists with the right size is kept (the bytes are deterministic), so a second
// call is quick.
func WriteSPAFixture(dir string, m SPAManifest, log io.Writer) error {
	if err := m.Validate(); err != nil {
		return err
	}
	for i, f := range m.Bundle {
		gen := func(w io.Writer) error { return writeCode(w, f.Path, m.Seed, f.Size) }
		if i == 0 {
			gen = func(w io.Writer) error { return writeIndexHTML(w, m) }
		}
		if err := writeBundleFile(dir, f, gen); err != nil {
			return err
		}
	}
	for _, f := range m.Assets {
		gen := func(w io.Writer) error {
			_, err := io.Copy(w, newPatternReader(fmt.Sprintf("%d/%s", m.Seed, f.Path), f.Size))
			return err
		}
		if err := writeIfChanged(filepath.Join(dir, f.Path), f.Size, gen); err != nil {
			return err
		}
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	if err := writeIfChanged(filepath.Join(dir, SPAManifestName), -1, func(w io.Writer) error {
		_, err := w.Write(append(b, '\n'))
		return err
	}); err != nil {
		return err
	}
	fmt.Fprintf(log, "wrote SPA fixture %s: %d bundle files, %d assets\n", dir, len(m.Bundle), len(m.Assets))
	return nil
}

// ReadSPAManifest reads and validates a manifest.
func ReadSPAManifest(r io.Reader) (SPAManifest, error) {
	var m SPAManifest
	dec := json.NewDecoder(io.LimitReader(r, 1<<20))
	if err := dec.Decode(&m); err != nil {
		return m, fmt.Errorf("spa manifest: %w", err)
	}
	return m, m.Validate()
}

// seedOf derives a per-file seed from the fixture's seed and the file's path.
func seedOf(seed uint64, path string) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d/%s", seed, path)
	return h.Sum64()
}
