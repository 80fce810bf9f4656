package site

import (
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/coffer/coffer"
)

// MaxPathLen bounds a request path, encoded and decoded.
const MaxPathLen = 1024

// RequestPath returns the clean path of r, the only form keys are made from. It
// checks the raw (escaped) form as well as the decoded one: an encoded slash
// (%2F) is refused there, since decoding would turn it into a separator; the
// decoded path then goes through CleanPath. Returns EINVALID (400).
func RequestPath(r *http.Request) (string, error) {
	raw := r.URL.RawPath
	if raw == "" {
		raw = r.RequestURI // the escaped form as sent, up to its query
		if i := strings.IndexByte(raw, '?'); i >= 0 {
			raw = raw[:i]
		}
	}
	if len(raw) > MaxPathLen || containsFold(raw, "%2f") {
		return "", coffer.Errorf(coffer.EINVALID, "bad request path")
	}
	return CleanPath(r.URL.Path)
}

// CleanPath checks a decoded request path and returns its clean form, with runs
// of "/" merged into one (as nginx's merge_slashes). Refused (EINVALID): no
// leading "/", longer than MaxPathLen, not UTF-8, NUL and other control
// characters, backslash, "." or ".." segments, and a percent-encoded dot, slash,
// backslash or NUL left after decoding (a double-encoded "%252e" that an origin
// would decode again).
func CleanPath(p string) (string, error) {
	bad := len(p) == 0 || p[0] != '/' || len(p) > MaxPathLen || !utf8.ValidString(p)
	merge := false
	for i := 0; i < len(p) && !bad; i++ {
		switch c := p[i]; {
		case c < ' ' || c == 0x7f || c == '\\':
			bad = true
		case c == '%':
			bad = i+2 < len(p) && encodedUnsafe(p[i+1], p[i+2])
		case c == '/' && i > 0 && p[i-1] == '/':
			merge = true
		case c == '.' && p[i-1] == '/':
			end := i + 1
			if end < len(p) && p[end] == '.' {
				end++
			}
			bad = end == len(p) || p[end] == '/'
		}
	}
	if bad {
		return "", coffer.Errorf(coffer.EINVALID, "bad request path")
	}
	if merge {
		p = mergeSlashes(p)
	}
	return p, nil
}

// encodedUnsafe reports whether %hl encodes '.', '/', '\' or NUL.
func encodedUnsafe(h, l byte) bool {
	l |= 0x20 // lower case
	switch h {
	case '0':
		return l == '0'
	case '2':
		return l == 'e' || l == 'f'
	case '5':
		return l == 'c'
	}
	return false
}

// mergeSlashes replaces every run of "/" in p by one.
func mergeSlashes(p string) string {
	var b strings.Builder
	b.Grow(len(p))
	for i := 0; i < len(p); i++ {
		if p[i] == '/' && i > 0 && p[i-1] == '/' {
			continue
		}
		b.WriteByte(p[i])
	}
	return b.String()
}

// containsFold reports whether s contains the lower-case ASCII sub, ignoring case.
func containsFold(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if strings.EqualFold(s[i:i+len(sub)], sub) {
			return true
		}
	}
	return false
}
