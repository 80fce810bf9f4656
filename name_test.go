package coffer

import (
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

func FuzzCleanName(f *testing.F) {
	for _, s := range []string{"a.txt", "../x", "a/b/c", "/x", "C:x", "caf\u0065\u0301", "\x00", "a//b", "\xff"} {
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

func FuzzValidateMetadata(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":1}`, `null`, `[]`, `"x"`, `{"a":{"b":[1,2,{"c":null}]}}`, `{`, ``, `{"a":1e999}`} {
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
	})
}
