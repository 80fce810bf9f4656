package meta

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/coffer/coffer"
)

func FuzzDecodeCursor(f *testing.F) {
	f.Add(EncodeCursor("a/b.txt", "6f1e7a3c-8a4b-4c2d-9e1f-0a1b2c3d4e5f"))
	f.Add(EncodePrefixCursor("photos/2024/"))
	f.Add("!!")
	f.Add("")
	f.Fuzz(func(t *testing.T, c string) {
		name, id, err := DecodeCursor(c)
		if err != nil {
			if coffer.ErrorCode(err) != coffer.EINVALID {
				t.Fatalf("code %q", coffer.ErrorCode(err))
			}
			return
		}
		again := EncodeCursor(name, id)
		if id == "" { // a prefix cursor
			if !strings.HasSuffix(name, Delimiter) {
				t.Fatalf("prefix cursor %q without the delimiter", name)
			}
			again = EncodePrefixCursor(name)
		} else if _, err := coffer.ParseFileID(id); err != nil {
			t.Fatalf("cursor with bad id %q accepted", id)
		}
		n2, id2, err := DecodeCursor(again)
		if err != nil || n2 != name || id2 != id {
			t.Fatalf("round trip of (%q,%q) failed", name, id)
		}
	})
}

func TestPrefixEnd(t *testing.T) {
	for _, tt := range []struct {
		p, want string
		ok      bool
	}{
		{"photos/", "photos0", true},
		{"a", "b", true},
		{"é", "ê", true},
		{"a\u007f", "a\u0080", true},
		{"a\ud7ff", "a\ue000", true},
		{"a" + string(utf8.MaxRune), "b", true},
		{string(utf8.MaxRune), "", false},
		{"", "", false},
		{"a\xff", "", false},
		{"\xbf0", "", false}, // invalid before the last rune
	} {
		end, ok := PrefixEnd(tt.p)
		if end != tt.want || ok != tt.ok {
			t.Errorf("PrefixEnd(%q) = %q, %v; want %q, %v", tt.p, end, ok, tt.want, tt.ok)
		}
	}
}

// FuzzPrefixEnd: every string beginning with p sorts before PrefixEnd(p), which is
// valid UTF-8 and after p.
func FuzzPrefixEnd(f *testing.F) {
	f.Add("photos/", "2024/a.jpg")
	f.Add("é", "\U0010ffff")
	f.Fuzz(func(t *testing.T, p, rest string) {
		end, ok := PrefixEnd(p)
		if !ok {
			return
		}
		if !utf8.ValidString(end) || end <= p || p+rest >= end {
			t.Fatalf("PrefixEnd(%q) = %q, not above %q", p, end, p+rest)
		}
	})
}

func TestCommonPrefix(t *testing.T) {
	for _, tt := range []struct{ prefix, name, d, want string }{
		{"", "a/b/c", "/", "a/"},
		{"a/", "a/b/c", "/", "a/b/"},
		{"a/b/", "a/b/c", "/", ""},
		{"a", "a/b", "/", "a/"},
		{"", "a/b", "", ""},
	} {
		if got := CommonPrefix(tt.prefix, tt.name, tt.d); got != tt.want {
			t.Errorf("CommonPrefix(%q, %q, %q) = %q, want %q", tt.prefix, tt.name, tt.d, got, tt.want)
		}
	}
}
