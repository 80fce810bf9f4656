package bench

import (
	"compress/gzip"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"

	"github.com/andybalholm/brotli"
)

// Tokens of the generated code: keywords and punctuation of minified JavaScript and
// the properties of CSS. Identifiers come from a per-file pool drawn with a Zipf law,
// so the text compresses about as well as a real minified bundle (gzip ~3-4x).
var (
	jsTokens = strings.Fields(`function return const let var if else for while new this null void 0 !0 !1
		typeof instanceof await async => === !== && || ( ) { } [ ] ; , . = + - * ? : ( ) { } ; , . . = ( )`)
	cssProps = strings.Fields(`display:flex color margin padding border font-size line-height position:absolute
		width height background z-index opacity transform transition align-items justify-content gap`)
)

// codeGen writes pseudo-random code-like text.
type codeGen struct {
	rng   *rand.Rand
	zipf  *rand.Zipf
	names []string
	css   bool
}

func newCodeGen(seed uint64, css bool) *codeGen {
	rng := rand.New(rand.NewPCG(seed, 0x636f6465))
	g := &codeGen{rng: rng, zipf: rand.NewZipf(rng, 1.3, 4, 1999), names: make([]string, 2000), css: css}
	const letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_$"
	for i := range g.names {
		b := make([]byte, 1+rng.IntN(min(i/100+2, 14)))
		for j := range b {
			b[j] = letters[rng.IntN(len(letters))]
		}
		g.names[i] = string(b)
	}
	return g
}

// next appends one token (with its separator) to b.
func (g *codeGen) next(b []byte) []byte {
	name := g.names[g.zipf.Uint64()]
	if g.css {
		switch r := g.rng.IntN(8); {
		case r == 0:
			return fmt.Appendf(b, "}.%s-%s{", name, g.names[g.zipf.Uint64()])
		case r < 3:
			return fmt.Appendf(b, "%s:#%06x;", cssProps[g.rng.IntN(len(cssProps))], g.rng.IntN(1<<24))
		default:
			return fmt.Appendf(b, "%s:%dpx;", cssProps[g.rng.IntN(len(cssProps))], g.rng.IntN(64))
		}
	}
	a, b2 := g.names[g.zipf.Uint64()], g.names[g.zipf.Uint64()]
	switch r := g.rng.IntN(8); r {
	case 0:
		return fmt.Appendf(b, "function %s(e,t){", name)
	case 1:
		return fmt.Appendf(b, "return %s.%s(e,t)}", name, a)
	case 2:
		return fmt.Appendf(b, "const %s=%s(%q);", name, a, b2)
	case 3:
		return fmt.Appendf(b, "if(%s.%s===%s){", name, a, b2)
	case 4:
		return fmt.Appendf(b, "e.%s=t.%s,", name, a)
	case 5:
		return fmt.Appendf(b, "%s.prototype.%s=function(){return this.%s};", name, a, b2)
	case 6:
		return fmt.Appendf(b, "}%s(%d);", jsTokens[g.rng.IntN(len(jsTokens))], g.rng.IntN(100))
	default:
		return fmt.Appendf(b, "var %s=%s&&%s;", name, a, b2)
	}
}

// writeCode writes exactly size bytes of JS (or CSS, by path's extension) seeded by
// the fixture's seed and path.
func writeCode(w io.Writer, path string, seed uint64, size int64) error {
	g := newCodeGen(seedOf(seed, path), strings.HasSuffix(path, ".css"))
	buf := make([]byte, 0, 64<<10)
	for written := int64(0); written < size; {
		buf = g.next(buf[:0])
		for len(buf) < 32<<10 {
			buf = g.next(buf)
		}
		n := min(int64(len(buf)), size-written)
		if _, err := w.Write(buf[:n]); err != nil {
			return err
		}
		written += n
	}
	return nil
}

// writeIndexHTML writes the index page of m: a script or stylesheet tag per bundle
// file, padded with a comment to exactly m.Bundle[0].Size bytes.
func writeIndexHTML(w io.Writer, m SPAManifest) error {
	var b strings.Builder
	b.WriteString("<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>coffer bench SPA</title>\n")
	for _, f := range m.Bundle[1:] {
		if strings.HasSuffix(f.Path, ".css") {
			fmt.Fprintf(&b, "<link rel=\"stylesheet\" href=\"/%s\">\n", f.Path)
		} else {
			fmt.Fprintf(&b, "<script type=\"module\" src=\"/%s\"></script>\n", f.Path)
		}
	}
	b.WriteString("</head><body><div id=\"app\"></div></body></html>\n")
	pad := int(m.Bundle[0].Size) - b.Len() - len("<!--  -->\n")
	if pad < 0 {
		return fmt.Errorf("spa fixture: index.html needs %d bytes, the manifest says %d", b.Len(), m.Bundle[0].Size)
	}
	b.WriteString("<!-- " + strings.Repeat("x", pad) + " -->\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// writeBundleFile writes the bundle file f under dir with its ".gz" (gzip -9) and
// ".br" (brotli quality 11) siblings in one pass of gen, unless reuse is set and all
// three exist, f with its size.
func writeBundleFile(dir string, f SPAFile, reuse bool, gen func(io.Writer) error) error {
	path := filepath.Join(dir, f.Path)
	if reuse && sizeIs(path, f.Size) && sizeIs(path+".gz", -1) && sizeIs(path+".br", -1) {
		return nil
	}
	var gz *gzip.Writer
	var br *brotli.Writer
	return writeAtomic(path+".br", func(brw io.Writer) error {
		br = brotli.NewWriterLevel(brw, brotli.BestCompression)
		return writeAtomic(path+".gz", func(gzw io.Writer) error {
			gz, _ = gzip.NewWriterLevel(gzw, gzip.BestCompression) // a valid level: no error
			return writeAtomic(path, func(plain io.Writer) error {
				if err := gen(io.MultiWriter(plain, gz, br)); err != nil {
					return err
				}
				if err := gz.Close(); err != nil {
					return err
				}
				return br.Close()
			})
		})
	})
}

// sizeIs reports whether path is a regular file of size bytes (-1: of any size).
func sizeIs(path string, size int64) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular() && (size < 0 || st.Size() == size)
}
