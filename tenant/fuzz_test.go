package tenant

import (
	"bytes"
	"encoding/json"
	"net/netip"
	"slices"
	"strings"
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
		b, berr := AppendHost([]byte("x"), []byte(raw))
		if (berr == nil) != (err == nil) || string(b) != "x"+got {
			t.Fatalf("bytes form of %q: %q, %v; string form %q, %v", raw, b, berr, got, err)
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

// FuzzSettings: Parse never panics and refuses only with EINVALID or ETOOLARGE; what
// it accepts validates again, survives Prepare, parses in stored form with the
// same meaning, and its redacted form shows no secret.
func FuzzSettings(f *testing.F) {
	f.Add([]byte(writtenDoc))
	f.Add([]byte(`{"storage": {"kind": "s3", "bucket": "a.b-c", "accessKeyId": "k", "secretAccessKey": "v1:x"}}`))
	f.Add([]byte(`{"jwt": {"type": "RS256", "jwk_url": "https://x/jwks"}, "limits": {"burst": 1, "requestsPerSecond": 0.5}}`))
	f.Add([]byte(`{"adminSecrets": ["sha256:` + strings.Repeat("0", 64) + `"]}`))
	sealer := testSealer(f, 3)
	f.Fuzz(func(t *testing.T, doc []byte) {
		s, err := Parse(doc)
		if err != nil {
			if c := coffer.ErrorCode(err); c != coffer.EINVALID && c != coffer.ETOOLARGE {
				t.Fatalf("Parse: %v, want EINVALID or ETOOLARGE", err)
			}
			return
		}
		if err := s.Validate(); err != nil {
			t.Fatalf("accepted, then Validate: %v", err)
		}
		written := *s
		written.AdminSecrets = slices.Clone(s.AdminSecrets)
		if err := s.Prepare(sealer, "t"); err != nil {
			if coffer.ErrorCode(err) != coffer.EINVALID || !hasSealed(&written) {
				t.Fatalf("Prepare: %v", err) // only a sealed value from elsewhere may fail
			}
			return
		}
		checkStored(t, s, &written, sealer)
	})
}

// hasSealed reports whether written settings carry a value in sealed form.
func hasSealed(s *Settings) bool {
	return IsSealed(s.PresignKey) || IsSealed(s.Storage.SecretAccessKey) || bytes.Contains(s.JWT, []byte(sealPrefix))
}

// checkStored checks prepared settings against what was written.
func checkStored(t *testing.T, s, written *Settings, sealer *Sealer) {
	stored, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Parse(stored)
	if err != nil {
		t.Fatalf("stored form does not parse: %v\n%s", err, stored)
	}
	for _, a := range written.AdminSecrets {
		if !isHash(a) && !back.CheckAdminSecret(a) {
			t.Fatalf("admin secret %q does not check after storing", a)
		}
	}
	if k, err := back.OpenPresignKey(sealer, "t"); err != nil || (!IsSealed(written.PresignKey) && k != written.PresignKey) {
		t.Fatalf("presign key %q opens as %q, %v", written.PresignKey, k, err)
	}
	red, _ := json.Marshal(back.Redacted())
	for _, secret := range append(slices.Clone(back.AdminSecrets), back.PresignKey, back.Storage.SecretAccessKey, written.PresignKey, written.Storage.SecretAccessKey) {
		if len(secret) >= 8 && bytes.Contains(red, []byte(secret)) {
			t.Fatalf("redacted form shows %q: %s", secret, red)
		}
	}
}
