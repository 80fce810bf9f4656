package site

import (
	"bufio"
	"encoding/json"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/coffer/coffer"
)

// FuzzParse: Parse never panics, refuses with EINVALID or ETOOLARGE only, and
// what it accepts encodes to a document it accepts again, unchanged.
func FuzzParse(f *testing.F) {
	f.Add([]byte(testSiteDoc))
	f.Add([]byte(minimal))
	f.Add([]byte(`{"id":"s","hosts":["a.test"],"routes":[{"path":"/a/**/b*.js","target":{"redirect":{"to":"https://x.test/:splat"}}}]}`))
	f.Add([]byte(`{"id":"s","hosts":["a.test"],"routes":[{"path":"/*","target":{"redirect":{"to":"/\\x.test"}},"headers":{"X-Accel-Redirect":"/i"}},` +
		`{"path":"/b/*","target":{"bucket":{"id":"b","trusted":true}}},` +
		`{"path":"/h/*","target":{"http":{"url":"http://o.test/","headersSet":["Authorization"],"precompressed":true}}}]}`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		s, err := Parse(doc)
		if err != nil {
			if c := coffer.ErrorCode(err); c != coffer.EINVALID && c != coffer.ETOOLARGE {
				t.Fatalf("%q: %v", doc, err)
			}
			return
		}
		again, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		s2, err := Parse(again)
		if err != nil {
			t.Fatalf("re-parse of %s: %v", again, err)
		}
		if b, _ := json.Marshal(s2); string(b) != string(again) {
			t.Fatalf("not stable:\n%s\n%s", again, b)
		}
	})
}

// refPattern is the slow reference of a route pattern: a regular expression.
func refPattern(p string) *regexp.Regexp {
	if strings.HasSuffix(p, "/*") && !strings.HasSuffix(p, "**") {
		p = p[:len(p)-1] + "**"
	}
	var b strings.Builder
	b.WriteString("^")
	for i := 0; i < len(p); i++ {
		switch {
		case strings.HasPrefix(p[i:], "**"):
			b.WriteString("(?s:.*)")
			i++
		case p[i] == '*':
			b.WriteString("[^/]*")
		default:
			b.WriteString(regexp.QuoteMeta(p[i : i+1]))
		}
	}
	b.WriteString("$")
	return regexp.MustCompile(b.String())
}

// FuzzPatternMatch compares the compiled matcher with the regular expression.
func FuzzPatternMatch(f *testing.F) {
	for _, c := range [][2]string{
		{"/assets/*", "/assets/a/b.js"}, {"/a/*.js", "/a/x.js"}, {"/a/*.js", "/a/b/x.js"}, {"/**/x", "/a/b/x"},
		{"/a/**/b*.js", "/a/q/b1.js"}, {"/*", "/"}, {"/about", "/about"}, {"/a*b*c", "/aXbYc"},
	} {
		f.Add(c[0], c[1])
	}
	f.Fuzz(func(t *testing.T, pat, path string) {
		p, err := parsePattern(pat)
		if err != nil || !utf8.ValidString(path) {
			return
		}
		want := refPattern(pat).MatchString(path)
		if got := p.match(path); got != want {
			t.Fatalf("pattern %q path %q: match %v, reference %v", pat, path, got, want)
		}
		if want && !strings.HasPrefix(path, p.literal) {
			t.Fatalf("pattern %q matched %q without its literal part %q", pat, path, p.literal)
		}
	})
}

// FuzzCleanPath: what CleanPath accepts starts with "/", holds no control
// character, backslash, "." or ".." segment or "//", and is clean again. (Bucket
// keys are checked with coffer.CleanName as well before they are opened.)
func FuzzCleanPath(f *testing.F) {
	for _, s := range []string{"/", "/a/b.html", "//a//b/", "/../x", "/a/%2e%2e/b", "/a\\b", "/a\x00", "/.well-known/x", "/a/.../b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		c, err := CleanPath(p)
		if err != nil {
			if coffer.ErrorCode(err) != coffer.EINVALID {
				t.Fatal(err)
			}
			return
		}
		if c[0] != '/' || strings.Contains(c, "//") || strings.ContainsAny(c, "\\\x00\r\n\x7f") || len(c) > MaxPathLen {
			t.Fatalf("%q -> %q", p, c)
		}
		for _, seg := range strings.Split(c, "/") {
			if seg == "." || seg == ".." {
				t.Fatalf("%q -> %q has a dot segment", p, c)
			}
		}
		if again, err := CleanPath(c); err != nil || again != c {
			t.Fatalf("not idempotent: %q -> %q -> %q %v", p, c, again, err)
		}
	})
}

// refNegotiate is the slow reference of negotiate.
func refNegotiate(lines []string) encoding {
	q := map[string]float64{}
	for _, item := range strings.Split(strings.Join(lines, ","), ",") {
		parts := strings.Split(item, ";")
		name := strings.ToLower(strings.Trim(parts[0], " \t"))
		if name == "" {
			continue
		}
		w, ok := 1.0, true
		for _, p := range parts[1:] {
			k, v, _ := strings.Cut(strings.Trim(p, " \t"), "=")
			if k == "q" || k == "Q" {
				v = strings.Trim(v, " \t")
				f, err := strconv.ParseFloat(v, 64)
				ok = ok && err == nil && f >= 0 && f <= 1 && regexp.MustCompile(`^(0(\.\d{0,3})?|1(\.0{0,3})?)$`).MatchString(v) && v != "0." && v != "1."
				w = f
			}
		}
		if !ok {
			continue
		}
		if name == "x-gzip" {
			name = "gzip"
		}
		q[name] = w
	}
	best, bestQ := encIdentity, 0.0
	for e := encBrotli; e < numEncodings; e++ {
		w, named := q[codingNames[e]]
		if !named {
			w = q["*"]
		}
		if w > bestQ+1e-9 {
			best, bestQ = e, w
		}
	}
	if id, named := q["identity"]; best != encIdentity && named && id > bestQ+1e-9 {
		return encIdentity
	}
	return best
}

// FuzzNegotiate compares negotiate with the reference.
func FuzzNegotiate(f *testing.F) {
	for _, s := range []string{"br", "gzip;q=0.5, br;q=0.1", "br;q=0, gzip", "*", "identity;q=0", "gzip, identity", "x-gzip;q=0.3,gzip;q=0.2", "gzip, gzip;q=0", "zstd;q=1.000"} {
		f.Add(s, "")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		if strings.ContainsAny(a+b, "\"") {
			return // quoted parameters are not parsed by either
		}
		h := http.Header{"Accept-Encoding": {a, b}}
		if got, want := negotiate(h), refNegotiate([]string{a, b}); got != want {
			t.Fatalf("%q %q: %v, reference %v", a, b, got, want)
		}
	})
}

// FuzzRequestPath parses a raw request target as the server does and checks
// that what RequestPath accepts is clean and came without an encoded slash.
func FuzzRequestPath(f *testing.F) {
	for _, s := range []string{"/a/b", "/a%2Fb", "/%2e%2e/x", "/a/../b", "//x//y", "/caf%C3%A9.html", "/a?b=%2F", "http://h/a%2fb"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, target string) {
		req, err := http.ReadRequest(bufio.NewReader(strings.NewReader("GET " + target + " HTTP/1.1\r\nHost: h\r\n\r\n")))
		if err != nil {
			return
		}
		p, err := RequestPath(req)
		raw, _, _ := strings.Cut(req.RequestURI, "?")
		// The fast path's reading of the raw target: when it answers, it answers
		// for RequestPath's path.
		if fp, ok := fastRequestPath([]byte(raw)); ok && (err != nil || fp != p) {
			t.Fatalf("%q: the fast path reads %q, RequestPath %q (%v)", target, fp, p, err)
		}
		if err != nil {
			if coffer.ErrorCode(err) != coffer.EINVALID {
				t.Fatal(err)
			}
			return
		}
		if strings.Contains(strings.ToLower(raw), "%2f") || strings.Contains(strings.ToLower(req.URL.RawPath), "%2f") {
			t.Fatalf("%q: accepted an encoded slash as %q", target, p)
		}
		if c, err := CleanPath(p); err != nil || c != p {
			t.Fatalf("%q: %q is not clean: %v", target, p, err)
		}
	})
}
