package tenant

import (
	"strings"
	"testing"

	"github.com/coffer/coffer"
)

func TestValidID(t *testing.T) {
	good := []string{"a", "acme", "0", "a-b", "a1-2-3", strings.Repeat("a", 63)}
	bad := []string{"", "-a", "a-", "A", "ac_me", "a.b", "ä", strings.Repeat("a", 64), "a b", "a\n"}
	for _, id := range good {
		if err := ValidID(id); err != nil {
			t.Errorf("ValidID(%q) = %v, want nil", id, err)
		}
	}
	for _, id := range bad {
		err := ValidID(id)
		if coffer.ErrorCode(err) != coffer.EINVALID || coffer.ErrorField(err) != "id" {
			t.Errorf("ValidID(%q) = %v, want EINVALID on field id", id, err)
		}
	}
}

func TestNormalizeHost(t *testing.T) {
	long63 := strings.Repeat("a", 63)
	name253 := strings.Repeat(long63+".", 3) + strings.Repeat("b", 61) // 63*3+3+61 = 253
	cases := []struct{ in, want string }{
		{"acme.example.com", "acme.example.com"},
		{"ACME.Example.COM", "acme.example.com"},
		{"acme.example.com:8080", "acme.example.com"},
		{"acme.example.com.", "acme.example.com"},
		{"acme.example.com.:443", "acme.example.com"},
		{"localhost:1", "localhost"},
		{"h:65535", "h"},
		{"h:080", "h"},
		{"xn--bcher-kva.example", "xn--bcher-kva.example"},
		{"127.0.0.1:9000", "127.0.0.1"},
		{"[::1]", "[::1]"},
		{"[::1]:8080", "[::1]"},
		{"[0:0:0:0:0:0:0:1]", "[::1]"},
		{"[2001:DB8::A]", "[2001:db8::a]"},
		{name253, name253},
		{name253 + ".", name253},
	}
	for _, c := range cases {
		got, err := NormalizeHost(c.in)
		if err != nil || got != c.want {
			t.Errorf("NormalizeHost(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}

func TestNormalizeHostRefuses(t *testing.T) {
	bad := map[string]string{
		"":                              "missing",
		".":                             "missing",
		":80":                           "missing",
		"a.com..":                       "empty label",
		".a.com":                        "empty label",
		"a..com":                        "empty label",
		"a.com:":                        "bad port",
		"a.com:0":                       "bad port",
		"a.com:65536":                   "bad port",
		"a.com:123456":                  "bad port",
		"a.com:8x":                      "bad port",
		"a.com:80:80":                   "bad port",
		"::1":                           "bad port",
		"bücher.example":                "punycode",
		"\u212Acme.example":             "punycode", // KELVIN SIGN: lower-cases to 'k' in Unicode
		"a.com\r\nX-Evil: 1":            "bad port",
		"a.com\r\n":                     "control",
		"a.com\x00":                     "control",
		"a com":                         "control",
		"user@a.com":                    "userinfo",
		"a_b.com":                       "only letters",
		"a/b":                           "only letters",
		"*.a.com":                       "only letters",
		strings.Repeat("a", 64):         "longer than 63",
		strings.Repeat("a.", 127) + "a": "longer than 253",
		"[::1":                          "unclosed",
		"[::1]x":                        "bad port",
		"[::1]:":                        "bad port",
		"[::1]:99999":                   "bad port",
		"[127.0.0.1]":                   "not an IPv6",
		"[fe80::1%25eth0]":              "not an IPv6",
		"[fe80::1%eth0]":                "not an IPv6",
		"[::1].":                        "bad port",
	}
	for in, want := range bad {
		got, err := NormalizeHost(in)
		if coffer.ErrorCode(err) != coffer.EINVALID || !strings.Contains(coffer.ErrorMessage(err), want) {
			t.Errorf("NormalizeHost(%q) = %q, %v; want EINVALID mentioning %q", in, got, err, want)
		}
		if in != "" && strings.Contains(coffer.ErrorMessage(err), in) {
			t.Errorf("NormalizeHost(%q): the message repeats the value: %v", in, err)
		}
	}
}

func TestAppendHostAllocs(t *testing.T) {
	raw, dst := []byte("Acme.Files.Example.COM.:8443"), make([]byte, 0, MaxHostLen)
	allocs := testing.AllocsPerRun(100, func() {
		out, err := AppendHost(dst, raw)
		if err != nil || string(out) != "acme.files.example.com" {
			t.Fatalf("AppendHost = %q, %v", out, err)
		}
	})
	if allocs != 0 {
		t.Errorf("AppendHost: %v allocations, want 0", allocs)
	}
}

func TestNormalizeBytesAgrees(t *testing.T) {
	for _, in := range []string{"A.b:1", "[::1]:2", "x..y", "a.com.", "é"} {
		var b1, b2 hostBuf
		n1, err1 := normalizeInto(in, &b1)
		n2, err2 := normalizeInto([]byte(in), &b2)
		if n1 != n2 || (err1 == nil) != (err2 == nil) || string(b1[:n1]) != string(b2[:n2]) {
			t.Errorf("%q: string %q %v, bytes %q %v", in, b1[:n1], err1, b2[:n2], err2)
		}
	}
}
