package coffer

import (
	"strings"
	"testing"
)

// TestBucketCacheControl (D6): cacheControl must be a list of cache directives in
// printable ASCII; CR/LF and other control characters, non-ASCII bytes and
// malformed lists are EINVALID naming the field. Before the fix only the length
// was checked.
func TestBucketCacheControl(t *testing.T) {
	good := []string{"", "max-age=3600", "public, max-age=60", "no-store", "private,no-cache=\"Set-Cookie, X-A\"",
		"max-age=60 ,\ts-maxage=120", `ext="a\"b"`, "stale-while-revalidate=30, immutable"}
	bad := []string{"max-age=1\r\nX-Evil: 1", "max-age=1\n", "max-age=1\x00", "max-age=\x7f", "max-age=1\x1b[31m",
		"max-age=3600 ☃", "caf\xc3\xa9", "max-age=1,", ",max-age=1", "max-age=1,,public", "max-age=", "=1",
		"max age=1", "max-age=1;public", `no-cache="unterminated`, "max-age=\"\x01\"", " ", "a=b=c",
		strings.Repeat("a", MaxCacheControl+1)}
	for _, v := range good {
		b := NewBucket("b")
		b.CacheControl = v
		if err := b.Validate(); err != nil {
			t.Errorf("%q refused: %v", v, err)
		}
	}
	for _, v := range bad {
		b := NewBucket("b")
		b.CacheControl = v
		err := b.Validate()
		if ErrorCode(err) != EINVALID || !strings.HasPrefix(ErrorMessage(err), "cacheControl") {
			t.Errorf("%q: %v, want EINVALID naming cacheControl", v, err)
		}
	}
}

// FuzzCheckCacheControl: never a panic, and an accepted value holds only printable
// ASCII, spaces and tabs (nothing that could end or split a header line).
func FuzzCheckCacheControl(f *testing.F) {
	for _, s := range []string{"max-age=3600", "a, b=\"c\\\"d\"", "x\r\ny", "max-age=1,"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		if checkCacheControl(v) != nil {
			return
		}
		for i := 0; i < len(v); i++ {
			if c := v[i]; c != '\t' && (c < ' ' || c >= 0x7f) {
				t.Fatalf("%q accepted with byte %#x", v, c)
			}
		}
		p := PrivateCacheControl(v)
		if err := checkCacheControl(p); err != nil || !strings.HasPrefix(p, "private") {
			t.Fatalf("PrivateCacheControl(%q) = %q: %v", v, p, err)
		}
		eachDirective(p[len("private"):], func(name, _ string) {
			if n := strings.ToLower(name); n == "public" || n == "private" || n == "s-maxage" || n == "proxy-revalidate" {
				t.Fatalf("PrivateCacheControl(%q) = %q keeps %s", v, p, name)
			}
		})
	})
}

// A private download keeps the bucket's directives for the client's cache, never
// those that let a shared cache store it.
func TestPrivateCacheControl(t *testing.T) {
	for v, want := range map[string]string{
		"":                        "private",
		"max-age=3600":            "private, max-age=3600",
		"public, max-age=60":      "private, max-age=60",
		"max-age=60,S-MAXAGE=600": "private, max-age=60",
		`private, no-cache="Set-Cookie, X", max-age=60`: `private, no-cache="Set-Cookie, X", max-age=60`,
		"no-store": "private, no-store",
		"proxy-revalidate,\tmax-age=1, immutable": "private, max-age=1, immutable",
		`private="Set-Cookie"`:                    "private",
	} {
		if got := PrivateCacheControl(v); got != want {
			t.Errorf("PrivateCacheControl(%q) = %q, want %q", v, got, want)
		}
	}
	// It runs on every credentialed download.
	if n := testing.AllocsPerRun(100, func() { PrivateCacheControl("max-age=3600, immutable") }); n > 1 {
		t.Errorf("%v allocations for a value without shared-cache directives, want 1", n)
	}
}
