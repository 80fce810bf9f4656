package site

import (
	"net/http"
	"strings"
)

// encoding is a content coding the handler can answer with.
type encoding uint8

// Codings, in order of preference when the client weighs them the same.
const (
	encIdentity encoding = iota
	encBrotli
	encZstd
	encGzip
	numEncodings
)

// codingNames are the Content-Encoding tokens; suffixes the sibling file
// extensions.
var (
	codingNames = [numEncodings]string{"", "br", "zstd", "gzip"}
	suffixes    = [numEncodings]string{"", ".br", ".zst", ".gz"}
)

// negotiate picks the coding for an Accept-Encoding request header (every line
// of it), with q-values: the compressed coding of the highest q above 0 (ties:
// br, then zstd, then gzip; "*" stands for the ones not named; "x-gzip" is
// gzip; a coding named twice has its last q), unless identity is named with a
// higher q. Identity when nothing compressed is acceptable, even if identity
// itself is refused ("identity;q=0"): the answer is still the content. It never
// allocates.
func negotiate(h http.Header) encoding { return negotiateLines(h["Accept-Encoding"]) }

// negotiateLines is negotiate over the Accept-Encoding lines of a request.
func negotiateLines(lines []string) encoding {
	q := [numEncodings]int{-1, -1, -1, -1} // in thousandths; -1: not named
	star := -1
	for _, line := range lines {
		for line != "" {
			var item string
			item, line, _ = strings.Cut(line, ",")
			name, w, ok := parseCoding(item)
			if !ok {
				continue
			}
			switch {
			case name == "*":
				star = w
			case strings.EqualFold(name, "identity"):
				q[encIdentity] = w
			case strings.EqualFold(name, "br"):
				q[encBrotli] = w
			case strings.EqualFold(name, "zstd"):
				q[encZstd] = w
			case strings.EqualFold(name, "gzip") || strings.EqualFold(name, "x-gzip"):
				q[encGzip] = w
			}
		}
	}
	return pick(q, star)
}

// pick chooses from the weights of negotiate.
func pick(q [numEncodings]int, star int) encoding {
	best, bestQ := encIdentity, 0
	for e := encBrotli; e < numEncodings; e++ {
		w := q[e]
		if w < 0 {
			w = max(star, 0)
		}
		if w > bestQ {
			best, bestQ = e, w
		}
	}
	// Identity not named is acceptable (RFC 9110 §12.5.3) but preferred to no
	// named coding; named, it wins only with a higher q.
	if best != encIdentity && q[encIdentity] > bestQ {
		return encIdentity
	}
	return best
}

// parseCoding splits one Accept-Encoding item, "name[;q=value]", returning its
// weight in thousandths; ok is false for an empty or malformed item.
func parseCoding(item string) (name string, q int, ok bool) {
	name, params, _ := strings.Cut(item, ";")
	name = strings.Trim(name, " \t")
	if name == "" {
		return "", 0, false
	}
	q = 1000
	for params != "" {
		var p string
		p, params, _ = strings.Cut(params, ";")
		k, v, _ := strings.Cut(strings.Trim(p, " \t"), "=")
		if k == "q" || k == "Q" {
			if q, ok = parseQ(strings.Trim(v, " \t")); !ok {
				return "", 0, false
			}
		}
	}
	return name, q, true
}

// parseQ parses a qvalue (RFC 9110 §12.4.2): "0", "0.xyz", "1", "1.000".
func parseQ(v string) (int, bool) {
	if v == "" || len(v) > 5 || (v[0] != '0' && v[0] != '1') || len(v) > 1 && v[1] != '.' || len(v) == 2 {
		return 0, false
	}
	n, scale := int(v[0]-'0')*1000, 100
	for i := 2; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return 0, false
		}
		n += int(v[i]-'0') * scale
		scale /= 10
	}
	if n > 1000 {
		return 0, false
	}
	return n, true
}

// compressible reports whether content of type ct gains from compression: text,
// scripts, JSON, XML, SVG, WebAssembly and uncompressed font formats; never
// images, media, archives or woff/woff2 (already compressed).
func compressible(ct string) bool {
	if i := strings.IndexByte(ct, ';'); i >= 0 {
		ct = ct[:i]
	}
	ct = strings.TrimSpace(ct)
	if len(ct) > 64 {
		return false
	}
	var buf [64]byte
	b := buf[:len(ct)]
	for i := 0; i < len(ct); i++ {
		c := ct[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		b[i] = c
	}
	t := string(b) // does not escape: up to 32 bytes it stays on the stack
	if strings.HasPrefix(t, "text/") || strings.HasSuffix(t, "+json") || strings.HasSuffix(t, "+xml") {
		return true
	}
	switch t {
	case "application/javascript", "application/x-javascript", "application/ecmascript",
		"application/json", "application/xml", "application/wasm", "application/xhtml+xml",
		"application/x-font-ttf", "application/x-font-otf", "application/vnd.ms-fontobject",
		"font/ttf", "font/otf", "font/collection", "image/x-icon", "image/vnd.microsoft.icon",
		"image/bmp", "application/x-sh", "application/toml", "application/yaml":
		return true
	}
	return false
}
