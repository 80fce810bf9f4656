package hostile

import (
	"math/rand/v2"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// mark is in many generated names: no file or directory whose path holds it may
// appear anywhere on disk.
const mark = "hostile-mark"

// nameAtoms are the hostile pieces names are made of.
var nameAtoms = []string{
	// path traversal and absolute paths
	"../" + mark, "../../../../etc/" + mark, `..\` + mark, `..\..\` + mark, "a/../../" + mark, "%2e%2e/" + mark,
	"%2e%2e%2f" + mark, "..%2f" + mark, "..%5c" + mark, "%252e%252e%252f" + mark, "/" + mark, "/etc/passwd",
	`C:\` + mark, "C:" + mark, `\\server\share\` + mark, "//server/share/" + mark, "./" + mark, "a//b", "a/./b",
	"....//" + mark, ".../" + mark, "..", ".", "a/..", "a/.", "~/" + mark, "file:///" + mark, "\u2025/" + mark,
	"\uff0e\uff0e/" + mark, "\uff0e\uff0e\uff0f" + mark, "a/", "/",
	// control characters and header injection
	"\x00", "a\x00b", "\r\n", "a\rb", "a\nb", "a\r\nContent-Type: text/html", "a\r\nSet-Cookie: s=1", "\t", "\x7f",
	"\x1b[31mred", "\u0085", "\u2028", "\u2029", `a"; filename="evil.html`, `";`, `a\"b`, "a'b", "a`b", `"quoted"`,
	// URL-special characters
	"a?b", "a#b", "a%b", "a%zz", "%00", "%", "a&b=c", "a;b", "a+b", "a b", "a=b", "user@host:1", "a,b", "<script>",
	// Windows reserved names, trailing dots and spaces
	"CON", "NUL", "nul.txt", "COM1", "LPT1.txt", "aux", "PRN.", "name.", "name ", "name...", " name", "a:b", "a*b",
	"a|b", "a<b>", "desktop.ini",
	// Unicode normalisation
	"e\u0301", "\u00e9", "\u212b", "A\u030a", "\ufb01", "\u1e9b\u0323", "\u1100\u1161", "\u0041\u0308\u0301",
	// bidi controls, invisible characters (refused) and joiners (may be accepted)
	"evil\u202egpj.exe", "\u2066a\u2069", "\u2067b", "\u2068c", "\u200fa", "\u200ea", "\u061cb", "\u202aa",
	"\u202bx", "\u202cx", "\u202dx", "a\u200bb", "\ufeffa", "a\u2060b", "a\u2061b", "a\u2063", "a\u2064b",
	"\U0001F468\u200d\U0001F469\u200d\U0001F467", "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645",
	// scripts, emoji, odd code points
	"\u0645\u0644\u0641.txt", "\u05e7\u05d5\u05d1\u05e5.txt", "\U0001F600.png", "\U0001F3F3\ufe0f\u200d\U0001F308",
	"\u65e5\u672c\u8a9e", "a\ufffdb", "\uffff", "\U0010ffff", "\ue000", "\U000e0041",
	// invalid UTF-8 and overlong encodings
	"\xff", "a\xc0\xafb", "\xc0\xae\xc0\xae/" + mark, "\xe0\x80\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xc3",
	"\x80", "\xf8\x88\x80\x80\x80",
}

// refusedRunes are the bidi controls and invisible characters a name must not hold
// (D11); the joiners U+200C/U+200D, part of Persian words and emoji, are not here.
var refusedRunes = []rune{0x061c, 0x200b, 0x200e, 0x200f, 0x202a, 0x202b, 0x202c, 0x202d, 0x202e,
	0x2060, 0x2061, 0x2062, 0x2063, 0x2064, 0x2066, 0x2067, 0x2068, 0x2069, 0xfeff}

// mustRefuse returns why coffer must refuse name ("" if it may accept it): its
// documented name rules (coffer.CleanName) plus D11's invisible characters.
func mustRefuse(name string) string {
	if !utf8.ValidString(name) {
		return "invalid UTF-8"
	}
	n := norm.NFC.String(name)
	checks := []struct {
		bad bool
		why string
	}{
		{n == "", "empty"},
		{len(n) > 1024, "over 1024 bytes"},
		{strings.IndexFunc(n, unicode.IsControl) >= 0, "control character"},
		{strings.ContainsAny(n, string(refusedRunes)), "bidi control or invisible character"},
		{strings.ContainsRune(n, '\\'), "backslash"},
		{strings.HasPrefix(n, "/"), "absolute path"},
		{len(n) >= 2 && n[1] == ':' && unicode.IsLetter(rune(n[0])) && n[0] < 0x80, "drive letter"},
	}
	for _, c := range checks {
		if c.bad {
			return c.why
		}
	}
	for seg := range strings.SplitSeq(n, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return "empty, . or .. segment"
		}
	}
	return ""
}

// benignNames must be accepted: hostile-looking but harmless.
var benignNames = []string{"report 2024.pdf", "\u0645\u0644\u0641.txt", "\U0001F600.png", "e\u0301t\u00e9.txt",
	"a?b#c%d&e;f+g=h.txt", "name.", "photos/2024/me.jpg", "\u65e5\u672c\u8a9e.txt", "it's \"quoted\".txt"}

// hostileNames returns at least n names: every atom alone, inside a path and with
// an extension, the benign names, lengths around the 1024-byte limit, and seeded
// random concatenations of atoms.
func hostileNames(n int) []string {
	var out []string
	for _, a := range nameAtoms {
		out = append(out, a, "dir/"+a+".png", "x"+a+"y")
	}
	out = append(out, benignNames...)
	out = append(out, strings.Repeat("a", 1024), strings.Repeat("a", 1025), strings.Repeat("\u00e9", 512),
		strings.Repeat("e\u0301", 400), strings.Repeat("e\u0301", 513), strings.Repeat("a/", 400)+"b",
		strings.Repeat("\U0001F600", 257), strings.Repeat("\u202e", 10))
	rng := rand.New(rand.NewPCG(15, 15))
	for len(out) < n {
		var b strings.Builder
		for range 2 + rng.IntN(3) {
			b.WriteString(nameAtoms[rng.IntN(len(nameAtoms))])
		}
		out = append(out, b.String())
	}
	return out
}
