package coffer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCleanName(t *testing.T) {
	good := map[string]string{
		"a.txt":                   "a.txt",
		"dir/sub/file.png":        "dir/sub/file.png",
		"caf\u0065\u0301.txt":     "caf\u00e9.txt", // NFD -> NFC
		"spaces are fine.md":      "spaces are fine.md",
		"..hidden":                "..hidden",
		"日本語/ファイル.jpg":            "日本語/ファイル.jpg",
		strings.Repeat("a", 1024): strings.Repeat("a", 1024),
	}
	for in, want := range good {
		got, err := CleanName(in)
		if err != nil || got != want {
			t.Errorf("CleanName(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	bad := []string{"", "..", "../etc/passwd", "a/../b", "a/./b", "./a", "/abs", "a//b", "a/",
		"C:evil", "c:\\x", "\\\\server\\share", "a\\b", "nul\x00byte", "tab\tname", "\xff\xfe",
		strings.Repeat("a", 1025), "bell\a"}
	for _, in := range bad {
		if got, err := CleanName(in); err == nil || ErrorCode(err) != EINVALID {
			t.Errorf("CleanName(%q) = %q, %v; want EINVALID", in, got, err)
		}
	}
}

// TestNameRejectsBidiControls: names with bidirectional controls or invisible
// characters are refused, naming the code point (issue 15, D11); joiners, variation
// selectors and emoji tag sequences stay allowed.
func TestNameRejectsBidiControls(t *testing.T) {
	bad := map[string]string{
		"invoice\u202Efdp.exe":               "U+202E RIGHT-TO-LEFT OVERRIDE",
		"\uFEFFreport.pdf":                   "U+FEFF ZERO WIDTH NO-BREAK SPACE",
		"x\U000E0041.txt":                    "U+E0041 TAG CHARACTER",
		"\U0001F3F4\U000E0067\U000E0062.txt": "U+E0067 TAG CHARACTER", // a tag sequence without its cancel tag
	}
	required := []rune{0x061C, 0x200E, 0x200F, 0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2066, 0x2067, 0x2068, 0x2069,
		0x200B, 0x2060, 0x2061, 0x2062, 0x2063, 0x2064, 0xFEFF, 0x180E, 0x115F, 0x1160, 0x3164, 0xFFA0, 0xFFF9, 0xFFFA, 0xFFFB}
	for _, r := range required {
		if invisibleNames[r] == "" {
			t.Errorf("U+%04X is not refused", r)
		}
	}
	for r, name := range invisibleNames {
		bad["dir/a"+string(r)+"b.txt"] = fmt.Sprintf("U+%04X %s", r, name)
	}
	for in, want := range bad {
		_, err := CleanName(in)
		if ErrorCode(err) != EINVALID || !strings.Contains(ErrorMessage(err), want+", which is not allowed") {
			t.Errorf("CleanName(%+q) = %v; want EINVALID naming %s", in, err, want)
		}
	}
	good := []string{
		"\u0645\u06CC\u200C\u062E\u0648\u0627\u0647\u0645.txt", // Persian with ZWNJ
		"\U0001F468\u200D\U0001F469\u200D\U0001F467.png",       // family emoji (ZWJ)
		"\u2764\uFE0F.txt", // variation selector
		"\U0001F3F4\U000E0067\U000E0062\U000E0073\U000E0063\U000E0074\U000E007F.png", // flag of Scotland
		"\u05E9\u05DC\u05D5\u05DD.txt", // Hebrew
	}
	for _, in := range good {
		if _, err := CleanName(in); err != nil {
			t.Errorf("CleanName(%+q): %v", in, err)
		}
	}
}

// TestStripInvisible: names stored before the rule lose their invisible characters
// when shown, and clean names come back unchanged.
func TestStripInvisible(t *testing.T) {
	cases := map[string]string{"invoice\u202Efdp.exe": "invoicefdp.exe", "\uFEFFa\u200Bb\U000E0041": "ab"}
	for _, clean := range []string{"plain.txt", "\U0001F3F4\U000E0067\U000E0062\U000E0073\U000E0063\U000E0074\U000E007F"} {
		cases[clean] = clean
	}
	for in, want := range cases {
		if got := StripInvisible(in); got != want {
			t.Errorf("StripInvisible(%+q) = %+q, want %+q", in, got, want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { StripInvisible("dir/caf\u00e9 name.txt") }); n != 0 {
		t.Errorf("StripInvisible of a clean name allocates %v times", n)
	}
}

func FuzzCleanName(f *testing.F) {
	for _, s := range []string{"a.txt", "../x", "a/b/c", "/x", "C:x", "caf\u0065\u0301", "\x00", "a//b", "\xff",
		"evil\u202Egnp.exe", "\U0001F3F4\U000E0067\U000E0062\U000E0073\U000E0063\U000E0074\U000E007F.png", "a\U000E0041"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := CleanName(s)
		if err != nil {
			if ErrorCode(err) != EINVALID {
				t.Fatalf("error code %q", ErrorCode(err))
			}
			return
		}
		if !utf8.ValidString(got) || len(got) > MaxNameBytes || got == "" {
			t.Fatalf("accepted bad name %q", got)
		}
		if strings.HasPrefix(got, "/") || strings.ContainsAny(got, "\x00\\") {
			t.Fatalf("accepted bad name %q", got)
		}
		for _, seg := range strings.Split(got, "/") {
			if seg == "" || seg == "." || seg == ".." {
				t.Fatalf("accepted bad segment in %q", got)
			}
		}
		if StripInvisible(got) != got {
			t.Fatalf("accepted a name with an invisible character: %+q", got)
		}
		again, err := CleanName(got)
		if err != nil || again != got {
			t.Fatalf("not idempotent: %q -> %q, %v", got, again, err)
		}
	})
}

func TestParseFileID(t *testing.T) {
	if id, err := ParseFileID("6F1E7A3C-8A4B-4C2D-9E1F-0A1B2C3D4E5F"); err != nil || id != "6f1e7a3c-8a4b-4c2d-9e1f-0a1b2c3d4e5f" {
		t.Fatalf("got %q %v", id, err)
	}
	for _, s := range []string{"", "x", "../../etc", "{6f1e7a3c-8a4b-4c2d-9e1f-0a1b2c3d4e5f}", "urn:uuid:6f1e7a3c-8a4b-4c2d-9e1f-0a1b2c3d4e5f"} {
		if _, err := ParseFileID(s); err == nil {
			t.Errorf("ParseFileID(%q) accepted", s)
		}
	}
}

// FuzzValidateMetadata checks that accepted metadata is an object that re-validates to
// itself and carries the same tokens as the input: keys in the order sent, numbers as
// written.
func FuzzValidateMetadata(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":1}`, `null`, `[]`, `"x"`, `{"a":{"b":[1,2,{"c":null}]}}`, `{`, ``,
		`{"a":1e999}`, `{"z":1,"a":2}`, `{"n":12345678901234567890}`, "{\"a\":\"\xff\"}", `{} {}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		out, err := ValidateMetadata(b)
		if err != nil {
			if ErrorCode(err) != EINVALID {
				t.Fatalf("code %q", ErrorCode(err))
			}
			return
		}
		again, err := ValidateMetadata(out)
		if err != nil || string(again) != string(out) || out[0] != '{' {
			t.Fatalf("accepted %q as %q, which re-validates as %q, %v", b, out, again, err)
		}
		if s := strings.Trim(string(b), " \t\r\n"); s == "" || s == "null" {
			return
		}
		if in, got := jsonTokens(t, b), jsonTokens(t, out); in != got {
			t.Fatalf("accepted %q as %q: tokens %s, want %s", b, out, got, in)
		}
	})
}

// TestValidateMetadata pins the normaliser's behaviour: compacted, keys and numbers as
// sent, anything but a JSON object in valid UTF-8 refused.
func TestValidateMetadata(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{``, `{}`},
		{` null `, `{}`},
		{`{ "z": 1, "a": 2 }`, `{"z":1,"a":2}`},
		{`{"n":12345678901234567890,"f":1.50,"e":1e999}`, `{"n":12345678901234567890,"f":1.50,"e":1e999}`},
		{`{"h":"<&>"}`, `{"h":"<&>"}`},
		{`[1]`, ``},
		{`"x"`, ``},
		{`{} {}`, ``},
		{"{\"a\":\"\xff\"}", ``},
		{`{"a":` + strings.Repeat(" ", MaxMetadataBytes) + `1}`, ``},
	} {
		out, err := ValidateMetadata([]byte(tt.in))
		if tt.want == "" {
			if ErrorCode(err) != EINVALID {
				t.Errorf("ValidateMetadata(%.40q) = %s, %v; want EINVALID", tt.in, out, err)
			}
			continue
		}
		if err != nil || string(out) != tt.want {
			t.Errorf("ValidateMetadata(%.40q) = %s, %v; want %s", tt.in, out, err, tt.want)
		}
	}
}

// jsonTokens renders the token stream of a JSON document, numbers as written.
func jsonTokens(t *testing.T, b []byte) string {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var sb strings.Builder
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return sb.String()
		}
		if err != nil {
			t.Fatalf("tokens of %q: %v", b, err)
		}
		fmt.Fprintf(&sb, "%T:%v ", tok, tok)
	}
}
