package tenant

import (
	"fmt"
	"net/http"
	"net/netip"
	"testing"

	"github.com/coffer/coffer"
)

// testEntries is the table the resolver tests and fuzz targets share.
var testEntries = []Entry{
	{ID: "", Hosts: []string{"files.example.com", "OLD.example.com."}},
	{ID: "acme", Hosts: []string{"files.acme.com", "*.cdn.acme.com"}},
	{ID: "bob", Hosts: []string{"bob.files.example.com"}},
	{ID: "carol"},
	{ID: "v6", Hosts: []string{"[2001:db8::1]"}},
}

// testOptions goes with testEntries.
func testOptions() Options {
	return Options{
		Wildcards:      []string{"*.files.example.com", "*.localhost"},
		TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("::1/128")},
		PathPrefix:     true,
	}
}

func newTestResolver(t testing.TB) *Resolver {
	r, err := NewResolver(testEntries, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	return r
}

var (
	untrusted = netip.MustParseAddr("192.0.2.1")
	proxy     = netip.MustParseAddr("10.1.2.3")
)

func TestResolve(t *testing.T) {
	r := newTestResolver(t)
	cases := []struct {
		host, xfh string
		peer      netip.Addr
		path      string
		want      string // tenant id, or an error code
		rest      string
	}{
		{"files.example.com", "", untrusted, "/v1/files", "", "/v1/files"},
		{"old.example.com:8000", "", untrusted, "/v1/x", "", "/v1/x"},
		{"FILES.ACME.COM.", "", untrusted, "/v1/x", "acme", "/v1/x"},
		{"img.cdn.acme.com", "", untrusted, "/", "acme", "/"},
		{"a.img.cdn.acme.com", "", untrusted, "/", coffer.ENOTFOUND, ""},
		{"cdn.acme.com", "", untrusted, "/", coffer.ENOTFOUND, ""},
		{"carol.files.example.com", "", untrusted, "/v1", "carol", "/v1"},
		{"carol.localhost:1337", "", untrusted, "/v1", "carol", "/v1"},
		{"bob.files.example.com", "", untrusted, "/v1", "bob", "/v1"},          // exact
		{"dave.files.example.com", "", untrusted, "/v1", coffer.ENOTFOUND, ""}, // unconfigured label
		{"x.y.files.example.com", "", untrusted, "/v1", coffer.ENOTFOUND, ""},
		{"[2001:DB8:0::1]:443", "", untrusted, "/", "v6", "/"},
		{"nobody.example.org", "", untrusted, "/v1", coffer.ENOTFOUND, ""},
		{"", "", untrusted, "/v1", coffer.EINVALID, ""},
		{"a\r\nb", "", untrusted, "/v1", coffer.EINVALID, ""},
		// X-Forwarded-Host: only from a trusted proxy, its right-most value.
		{"files.example.com", "files.acme.com", untrusted, "/v1", "", "/v1"},
		{"files.example.com", "files.acme.com", proxy, "/v1", "acme", "/v1"},
		{"files.example.com", "evil.com, files.acme.com ", proxy, "/v1", "acme", "/v1"},
		{"files.example.com", "files.acme.com,carol.localhost", proxy, "/v1", "carol", "/v1"},
		{"files.example.com", "files.acme.com", netip.MustParseAddr("::ffff:10.0.0.1"), "/v1", "acme", "/v1"},
		{"files.example.com", "files.acme.com,", proxy, "/v1", coffer.EINVALID, ""},
		// The path prefix: on an unknown or default host, never over a tenant's host.
		{"10.0.0.5:9000", "", untrusted, "/t/carol/v1/files", "carol", "/v1/files"},
		{"files.example.com", "", untrusted, "/t/acme/", "acme", "/"},
		{"files.example.com", "", untrusted, "/t/acme", coffer.ENOTFOUND, ""},
		{"files.example.com", "", untrusted, "/t//v1", coffer.ENOTFOUND, ""},
		{"files.example.com", "", untrusted, "/t/dave/v1", coffer.ENOTFOUND, ""},
		{"files.example.com", "", untrusted, "/t/%61cme/v1", coffer.ENOTFOUND, ""},
		{"files.acme.com", "", untrusted, "/t/carol/v1", "acme", "/t/carol/v1"},
		{"unknown.org", "", untrusted, "/v1", coffer.ENOTFOUND, ""},
	}
	for _, c := range cases {
		for _, form := range []string{"string", "bytes"} {
			var res Result
			var err error
			if form == "string" {
				res, err = r.Resolve(c.host, c.xfh, c.peer, c.path)
			} else {
				res, err = r.ResolveBytes([]byte(c.host), []byte(c.xfh), c.peer, []byte(c.path))
			}
			got := res.TenantID
			if err != nil {
				got = coffer.ErrorCode(err)
			}
			if got != c.want || (err == nil && res.Path(c.path) != c.rest) {
				t.Errorf("%s Resolve(%q, %q, %v, %q) = %+v, %v; want %q continuing with %q",
					form, c.host, c.xfh, c.peer, c.path, res, err, c.want, c.rest)
			}
			if coffer.ErrorCode(err) == coffer.ENOTFOUND && coffer.ErrorMessage(err) != "not found" {
				t.Errorf("the not-found message reveals something: %q", coffer.ErrorMessage(err))
			}
		}
	}
}

func TestForwardedHost(t *testing.T) {
	r := newTestResolver(t)
	h := http.Header{}
	h.Add("X-Forwarded-Host", "files.acme.com")
	h.Add("X-Forwarded-Host", "evil.example, carol.localhost")
	if got := ForwardedHost(h); got != "files.acme.com,evil.example, carol.localhost" {
		t.Errorf("ForwardedHost = %q", got)
	}
	if res, err := r.Resolve("files.example.com", ForwardedHost(h), proxy, "/"); err != nil || res.TenantID != "carol" || res.Source != ByForwardedHost {
		t.Errorf("the last line's last value: %+v, %v; want carol", res, err)
	}
	if ForwardedHost(http.Header{}) != "" {
		t.Error("no header, yet a value")
	}
}

func TestNewResolverRefuses(t *testing.T) {
	cases := []struct {
		entries []Entry
		opt     Options
		field   string
	}{
		{[]Entry{{ID: "Acme"}}, Options{}, "id"},
		{[]Entry{{ID: "a"}, {ID: "a"}}, Options{}, "id"},
		{[]Entry{{ID: "a", Hosts: []string{"x.com"}}, {ID: "b", Hosts: []string{"X.com."}}}, Options{}, "hosts[0]"},
		{[]Entry{{ID: "a", Hosts: []string{"ok.com", "x.com:80"}}}, Options{}, "hosts[1]"},
		{[]Entry{{ID: "a", Hosts: []string{"*.*.com"}}}, Options{}, "hosts[0]"},
		{[]Entry{{ID: "a", Hosts: []string{"*.[::1]"}}}, Options{}, "hosts[0]"},
		{[]Entry{{ID: "a", Hosts: []string{"*.x.com"}}}, Options{Wildcards: []string{"*.X.com"}}, "wildcards[0]"},
		{nil, Options{Wildcards: []string{"*.bücher.de"}}, "wildcards[0]"},
		{nil, Options{Wildcards: []string{"*."}}, "wildcards[0]"},
	}
	for i, c := range cases {
		_, err := NewResolver(c.entries, c.opt)
		if coffer.ErrorCode(err) != coffer.EINVALID || coffer.ErrorField(err) != c.field {
			t.Errorf("case %d: NewResolver = %v (field %q), want EINVALID on %q", i, err, coffer.ErrorField(err), c.field)
		}
	}
}

// thousandTenants returns 1,000 tenants, each with an exact host, under a capturing
// wildcard: the table of the benchmarks.
func thousandTenants(tb testing.TB) *Resolver { return nTenants(tb, 1000) }

// nTenants returns n tenants "tenant-0" ... with exact hosts "files.tenant-N.example.org",
// under the capturing wildcard "*.files.example.com".
func nTenants(tb testing.TB, n int) *Resolver {
	entries := make([]Entry, n)
	for i := range entries {
		id := fmt.Sprintf("tenant-%d", i)
		entries[i] = Entry{ID: id, Hosts: []string{"files." + id + ".example.org"}}
	}
	r, err := NewResolver(entries, Options{Wildcards: []string{"*.files.example.com"}, PathPrefix: true})
	if err != nil {
		tb.Fatal(err)
	}
	return r
}

func TestResolveAllocs(t *testing.T) {
	r := thousandTenants(t)
	hosts := [][]byte{[]byte("files.tenant-7.example.org"), []byte("Tenant-999.FILES.example.com:8080")}
	for _, h := range hosts {
		allocs := testing.AllocsPerRun(100, func() {
			if _, err := r.ResolveBytes(h, nil, untrusted, []byte("/v1/files")); err != nil {
				t.Fatal(err)
			}
		})
		if allocs != 0 {
			t.Errorf("ResolveBytes(%q): %v allocations per hit, want 0", h, allocs)
		}
	}
}

func BenchmarkResolve(b *testing.B) {
	r := thousandTenants(b)
	for _, bc := range []struct{ name, host string }{
		{"exact", "files.tenant-500.example.org"},
		{"wildcard", "tenant-500.files.example.com"},
		{"upper+port", "Tenant-500.Files.Example.com:8443"},
	} {
		host := []byte(bc.host)
		b.Run(bc.name+"/bytes", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := r.ResolveBytes(host, nil, untrusted, []byte("/v1/files/x")); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(bc.name+"/string", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := r.Resolve(bc.host, "", untrusted, "/v1/files/x"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("path/bytes", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := r.ResolveBytes([]byte("10.0.0.1:9000"), nil, untrusted, []byte("/t/tenant-500/v1/files/x")); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkResolveTable: an exact host and a wildcard host of tenant-0, in a table
// of 1 tenant and of 1,000 (does the table's size cost anything?).
func BenchmarkResolveTable(b *testing.B) {
	for _, n := range []int{1, 1000} {
		r := nTenants(b, n)
		for _, host := range []string{"files.tenant-0.example.org", "tenant-0.files.example.com"} {
			h := []byte(host)
			b.Run(fmt.Sprintf("tenants=%d/%s", n, host[:5]), func(b *testing.B) {
				b.ReportAllocs()
				defer cpuPerOp(b)()
				for b.Loop() {
					if _, err := r.ResolveBytes(h, nil, untrusted, []byte("/v1/files/x")); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// TestReserved: exact hosts (the default tenant's too) and names under any wildcard
// are reserved, whatever the label; other names are not.
func TestReserved(t *testing.T) {
	r, err := NewResolver([]Entry{{ID: "", Hosts: []string{"files.test"}}, {ID: "acme", Hosts: []string{"acme.test", "*.acme.test"}}},
		Options{Wildcards: []string{"*.w.test"}})
	if err != nil {
		t.Fatal(err)
	}
	for h, want := range map[string]bool{
		"files.test": true, "acme.test": true, "x.acme.test": true, "acme.w.test": true, "nobody-yet.w.test": true,
		"w.test": true, "a.b.w.test": false, "www.test": false, "acme.test.org": false, "other.test": false,
	} {
		if why, got := r.Reserved(h); got != want || (got && why == "") {
			t.Errorf("Reserved(%q) = %q, %v; want %v", h, why, got, want)
		}
	}
}

func TestIPLike(t *testing.T) {
	for h, want := range map[string]bool{
		"127.0.0.1": true, "[::1]": true, "127.1": true, "0x7f.1": true, "2130706433": true, "a.0x1": true,
		"www.test": false, "1.test": false, "a1": false, "x.1a": false,
	} {
		if got := IPLike(h); got != want {
			t.Errorf("IPLike(%q) = %v, want %v", h, got, want)
		}
	}
}
