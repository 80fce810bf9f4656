// Package console serves coffer's web console: a few static files (HTML, CSS and
// native ES modules, no build step) embedded in the binary and served under
// /console/. The console holds no privilege of its own: the page keeps the
// credential its user signs in with (admin secret, platform secret or JWT) in
// sessionStorage and calls the same APIs as any client (/v1 and the management
// API's Connect JSON), so it shows what that credential may see. It sets no cookie.
//
// The assets are compressed once, at the first request (gzip and brotli), and
// served per Accept-Encoding, with a strong ETag per encoding, Cache-Control
// no-cache (revalidated on every load) and a strict Content-Security-Policy that
// allows scripts and styles from the console's own origin only.
package console

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"path"
	"strconv"
	"strings"
	"sync"

	"github.com/andybalholm/brotli"
	"github.com/coffer/coffer"
)

//go:embed web
var web embed.FS

// DefaultCSP is the console's Content-Security-Policy: its own scripts and styles
// only (no inline script or style attribute), images, media and frames from its
// origin or blob: URLs it made (previews), connections to its origin only.
const DefaultCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' blob: data:; " +
	"media-src 'self' blob:; frame-src 'self' blob:; connect-src 'self'; object-src 'none'; " +
	"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// Config is the console's settings.
type Config struct {
	// Prefix is the path the console is served under; it begins and ends with "/".
	// The same path without its trailing "/" redirects to it.
	Prefix string
	// CSP is the Content-Security-Policy header of every answer.
	CSP string
}

// DefaultConfig returns the console at /console/ with DefaultCSP.
func DefaultConfig() Config { return Config{Prefix: "/console/", CSP: DefaultCSP} }

// Validate returns EINVALID if the prefix is not a path ending in "/" or the CSP is
// empty.
func (c Config) Validate() error {
	if len(c.Prefix) < 2 || !strings.HasPrefix(c.Prefix, "/") || !strings.HasSuffix(c.Prefix, "/") {
		return coffer.Errorf(coffer.EINVALID, "console prefix %q must begin and end with /", c.Prefix)
	}
	if strings.TrimSpace(c.CSP) == "" {
		return coffer.Errorf(coffer.EINVALID, "console CSP must not be empty")
	}
	return nil
}

// Handler serves the console. It is an api.Face (Prefixes).
type Handler struct {
	cfg    Config
	assets map[string]*asset // by path under the prefix; "" is index.html
	// compressed makes the gzip and brotli forms of every asset, once, at the first
	// request: a server whose console nobody opens keeps the ~2 MB that compressing
	// costs out of its idle memory.
	compressed sync.Once
}

// asset is one file in its three encodings.
type asset struct {
	ctype                string
	identity, gz, br     []byte // gz, br: nil until compressed
	etag, etagGz, etagBr string
}

// New returns the console's handler. Its assets are compressed at the first
// request.
func New(cfg Config) (*Handler, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	h := &Handler{cfg: cfg, assets: map[string]*asset{}}
	err := fs.WalkDir(web, "web", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := web.ReadFile(p)
		if err != nil {
			return err
		}
		a, err := newAsset(p, b)
		if err != nil {
			return err
		}
		h.assets[strings.TrimPrefix(p, "web/")] = a
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("console assets: %w", err)
	}
	h.assets[""] = h.assets["index.html"]
	return h, nil
}

// compress makes every asset's gzip and brotli forms (once).
func (h *Handler) compress() {
	h.compressed.Do(func() {
		c := newCompressor()
		for p, a := range h.assets {
			if p == "" {
				continue // index.html's alias
			}
			// Compressing in memory does not fail; if it did, the asset would be
			// served uncompressed.
			a.gz, _ = c.compress(c.gz, a.identity)
			a.br, _ = c.compress(c.br, a.identity)
		}
	})
}

// contentTypes maps the assets' extensions to their media types; a file of another
// extension is an error at New, so nothing is served with a guessed type.
var contentTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".svg":  "image/svg+xml",
	".png":  "image/png",
	".txt":  "text/plain; charset=utf-8",
}

// compressor compresses the assets one after the other with one writer of each
// kind, so that building the console costs a few MB of allocations, not a window
// per file (brotli's defaults allocate tens of MB, which stay in the process's RSS).
type compressor struct {
	gz  *gzip.Writer
	br  *brotli.Writer
	out bytes.Buffer
}

func newCompressor() *compressor {
	c := &compressor{}
	c.gz, _ = gzip.NewWriterLevel(&c.out, gzip.BestCompression)
	// A 64 KiB window holds any of the assets whole. Quality 9: 2 MB of allocations
	// and 9 ms for all of them, 7% larger than quality 11's 17 MB and 170 ms.
	c.br = brotli.NewWriterOptions(&c.out, brotli.WriterOptions{Quality: 9, LGWin: 16})
	return c
}

// compress returns b compressed by w, which writes to c.out.
func (c *compressor) compress(w interface {
	io.WriteCloser
	Reset(io.Writer)
}, b []byte) ([]byte, error) {
	c.out.Reset()
	w.Reset(&c.out)
	if _, err := w.Write(b); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return bytes.Clone(c.out.Bytes()), nil
}

func newAsset(p string, b []byte) (*asset, error) {
	ctype, ok := contentTypes[path.Ext(p)]
	if !ok {
		return nil, fmt.Errorf("%s: no content type for its extension", p)
	}
	sum := sha256.Sum256(b)
	tag := hex.EncodeToString(sum[:12])
	return &asset{ctype: ctype, identity: b, etag: `"` + tag + `"`, etagGz: `"` + tag + `-gz"`, etagBr: `"` + tag + `-br"`}, nil
}

// Prefixes implements api.Face: the prefix and the same path without its "/".
func (h *Handler) Prefixes() []string {
	return []string{h.cfg.Prefix, strings.TrimSuffix(h.cfg.Prefix, "/")}
}

// Size returns the bytes of every asset in the encoding named ("", "gzip", "br"):
// the most a first load of the console transfers.
func (h *Handler) Size(encoding string) int {
	h.compress()
	n := 0
	for p, a := range h.assets {
		if p == "" {
			continue
		}
		n += len(a.pick(encoding))
	}
	return n
}

func (a *asset) pick(encoding string) []byte {
	switch encoding {
	case "br":
		return a.br
	case "gzip":
		return a.gz
	}
	return a.identity
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("Content-Security-Policy", h.cfg.CSP)
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("Cross-Origin-Opener-Policy", "same-origin")
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		hd.Set("Allow", "GET, HEAD")
		plain(w, http.StatusMethodNotAllowed, "method not allowed")
		return
	}
	if r.URL.Path+"/" == h.cfg.Prefix {
		// Relative, so that a prefix in front (a tenant's /t/{id}/) is kept.
		hd.Set("Location", path.Base(r.URL.Path)+"/")
		plain(w, http.StatusMovedPermanently, "moved")
		return
	}
	a := h.assets[strings.TrimPrefix(r.URL.Path, h.cfg.Prefix)]
	if a == nil || !strings.HasPrefix(r.URL.Path, h.cfg.Prefix) {
		plain(w, http.StatusNotFound, "not found")
		return
	}
	h.compress()
	enc := negotiate(r.Header.Get("Accept-Encoding"))
	body, etag := a.identity, a.etag
	switch {
	case enc == "br" && a.br != nil:
		body, etag = a.br, a.etagBr
	case enc == "gzip" && a.gz != nil:
		body, etag = a.gz, a.etagGz
	default:
		enc = ""
	}
	hd.Set("Vary", "Accept-Encoding")
	hd.Set("Cache-Control", "no-cache")
	hd.Set("ETag", etag)
	hd.Set("Content-Type", a.ctype)
	if matchETag(r.Header.Get("If-None-Match"), etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	if enc != "" {
		hd.Set("Content-Encoding", enc)
	}
	hd.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodGet {
		w.Write(body)
	}
}

// plain answers a short text/plain status.
func plain(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	fmt.Fprintln(w, msg)
}

// negotiate returns "br", "gzip" or "" (identity) from an Accept-Encoding header:
// brotli first, then gzip, each unless absent or given q=0 (a "*" counts for both).
func negotiate(accept string) string {
	q := map[string]bool{}
	for _, part := range strings.Split(accept, ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		name = strings.ToLower(strings.TrimSpace(name))
		ok := true
		for _, p := range strings.Split(params, ";") {
			k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
			if strings.EqualFold(strings.TrimSpace(k), "q") {
				if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil && f == 0 {
					ok = false
				}
			}
		}
		if name != "" {
			q[name] = ok
		}
	}
	for _, enc := range []string{"br", "gzip"} {
		if ok, given := q[enc]; given {
			if ok {
				return enc
			}
			continue
		}
		if q["*"] {
			return enc
		}
	}
	return ""
}

// matchETag reports whether an If-None-Match header lists etag (or is "*"), by
// the weak comparison RFC 9110 asks for there.
func matchETag(header, etag string) bool {
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == "*" || t == etag {
			return true
		}
	}
	return false
}
