package coffer_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/coffer/coffer"
)

// TestStoredTypeRefusesActiveMismatch: content that sniffs as an active type (HTML,
// XML, PDF) is never stored under another declared type (issue 15, D10); agreeing
// declarations are kept, passive mismatches take the sniffed type.
func TestStoredTypeRefusesActiveMismatch(t *testing.T) {
	png := "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"
	cases := []struct{ declared, head, want string }{
		{"image/png", "<html><script>alert(1)</script>", "application/octet-stream"},
		{"image/png", "<!DOCTYPE html><p>hi", "application/octet-stream"},
		{"text/plain", "<html><body>x", "application/octet-stream"},
		{"image/jpeg", "%PDF-1.7\n", "application/octet-stream"},
		{"image/png", `<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg"/>`, "application/octet-stream"},
		{"", "<html>x", "text/html; charset=utf-8"},                         // no declaration: sniffed
		{"application/octet-stream", "<html>x", "text/html; charset=utf-8"}, // "unknown": sniffed
		{"text/html", "<html>x", "text/html; charset=utf-8"},
		{"text/html; charset=iso-8859-1", "<html>x", "text/html; charset=iso-8859-1"},
		{"image/svg+xml", `<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg"/>`, "image/svg+xml"},
		{"image/svg+xml", `<!-- made by hand --><svg xmlns="http://www.w3.org/2000/svg"/>`, "image/svg+xml"},
		{"application/xhtml+xml", "<html xmlns='http://www.w3.org/1999/xhtml'>", "application/xhtml+xml"},
		{"image/svg+xml", `<svg xmlns="http://www.w3.org/2000/svg"/>`, "image/svg+xml"}, // sniffs as text/plain
		{"image/png", `<svg onload="alert(1)"/>`, "image/png"},                          // served as a broken PNG, nosniff
		{"image/jpeg", png, "image/png"},
		{"image/png", png, "image/png"},
		{"text/markdown", "# title\n", "text/markdown"},
		{"text/plain", "hello", "text/plain"},
		{"not a type", "hello", "text/plain; charset=utf-8"},
	}
	for _, c := range cases {
		if got := coffer.StoredType(c.declared, []byte(c.head)); got != c.want {
			t.Errorf("coffer.StoredType(%q, %q) = %q, want %q", c.declared, c.head, got, c.want)
		}
	}
}

// FuzzStoredType: whatever the declaration, content that sniffs as active is stored
// as what it is or as application/octet-stream, never as a passive type a browser
// would trust, and the result is a well-formed media type.
func FuzzStoredType(f *testing.F) {
	f.Add("image/png", []byte("<html><script>x</script>"))
	f.Add("text/html; charset=utf-8", []byte("<!DOCTYPE html>"))
	f.Add("image/svg+xml", []byte("<?xml version='1.0'?><svg/>"))
	f.Add("", []byte("\x89PNG\r\n\x1a\n"))
	f.Fuzz(func(t *testing.T, declared string, head []byte) {
		if len(head) > 512 {
			head = head[:512]
		}
		got := coffer.StoredType(declared, head)
		if !utf8.ValidString(got) || !strings.Contains(got, "/") || coffer.BaseType(got) == "" {
			t.Fatalf("coffer.StoredType(%q, %q) = %q: not a media type", declared, head, got)
		}
		sniffed := coffer.StoredType("", head)
		if coffer.ActiveType(sniffed) && coffer.PassiveType(got) && got != "application/octet-stream" {
			t.Fatalf("active content %q stored as passive %q (declared %q)", sniffed, got, declared)
		}
	})
}
