package tenant

import (
	"net/netip"
	"testing"

	"github.com/coffer/coffer"
)

// FuzzNormalizeHost compares NormalizeHost, its byte form and the reference.
func FuzzNormalizeHost(f *testing.F) {
	for _, s := range []string{"a.com", "A.COM.:80", "[::1]:1", "\u212Aa.com", "a..b", "x:0", "[fe80::1%1]", "a@b", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		got, err := NormalizeHost(raw)
		want, ok := refNormalize(raw)
		if (err == nil) != ok || got != want {
			t.Fatalf("NormalizeHost(%q) = %q, %v; reference %q, %v", raw, got, err, want, ok)
		}
		if err != nil && coffer.ErrorCode(err) != coffer.EINVALID {
			t.Fatalf("NormalizeHost(%q): %v, want EINVALID", raw, err)
		}
		var buf hostBuf
		n, berr := normalizeInto([]byte(raw), &buf)
		if (berr == nil) != (err == nil) || string(buf[:n]) != got {
			t.Fatalf("bytes form of %q: %q, %v; string form %q, %v", raw, buf[:n], berr, got, err)
		}
		if err == nil {
			if again, err := NormalizeHost(got); err != nil || again != got {
				t.Fatalf("not idempotent: %q -> %q -> %q, %v", raw, got, again, err)
			}
		}
	})
}

// FuzzResolve compares Resolve, ResolveBytes and the reference over testEntries.
func FuzzResolve(f *testing.F) {
	f.Add("carol.files.example.com", "", "/v1", byte(0))
	f.Add("files.example.com", "evil, files.acme.com", "/t/acme/x", byte(1))
	f.Add("x.cdn.acme.com.", "", "/t/bob/", byte(2))
	f.Add("[2001:db8::1]", "", "/", byte(3))
	r := newTestResolver(f)
	opt := testOptions()
	peers := []netip.Addr{untrusted, proxy, netip.MustParseAddr("::1"), netip.MustParseAddr("::ffff:10.9.9.9")}
	f.Fuzz(func(t *testing.T, host, xfh, path string, p byte) {
		peer := peers[int(p)%len(peers)]
		res, err := r.Resolve(host, xfh, peer, path)
		id, off, code := refResolve(testEntries, opt, host, xfh, peer, path)
		if coffer.ErrorCode(err) != code || res.TenantID != id || res.PathOffset != off {
			t.Fatalf("Resolve(%q, %q, %v, %q) = %+v, %v; reference %q, %d, %q", host, xfh, peer, path, res, err, id, off, code)
		}
		bres, berr := r.ResolveBytes([]byte(host), []byte(xfh), peer, []byte(path))
		if bres != res || coffer.ErrorCode(berr) != code {
			t.Fatalf("ResolveBytes = %+v, %v; Resolve %+v, %v", bres, berr, res, err)
		}
	})
}
