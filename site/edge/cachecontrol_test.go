package edge

import (
	"testing"
	"time"

	"github.com/coffer/coffer/site"
)

func TestFreshnessOf(t *testing.T) {
	neg := site.Duration(0)
	p := site.EdgePolicy{TTL: site.Duration(5 * time.Minute), NegativeTTL: &neg}
	for _, c := range []struct {
		header string
		want   freshness
	}{
		{"", freshness{ttl: 5 * time.Minute, swr: time.Minute, sie: 24 * time.Hour, store: true}},
		{"max-age=30", freshness{ttl: 30 * time.Second, swr: time.Minute, sie: 24 * time.Hour, store: true}},
		{"max-age=30, s-maxage=90", freshness{ttl: 90 * time.Second, swr: time.Minute, sie: 24 * time.Hour, store: true}},
		{`S-MAXAGE="7", stale-while-revalidate=3,stale-if-error=9`, freshness{ttl: 7 * time.Second, swr: 3 * time.Second, sie: 9 * time.Second, store: true}},
		{"no-store", freshness{ttl: 5 * time.Minute, swr: time.Minute, sie: 24 * time.Hour}},
		{"private, max-age=60", freshness{ttl: time.Minute, swr: time.Minute, sie: 24 * time.Hour}},
		{"no-cache", freshness{ttl: 5 * time.Minute, swr: time.Minute, sie: 24 * time.Hour, store: true, revalidate: true}},
		{`no-cache="Set-Cookie, X-Foo", max-age=10`, freshness{ttl: 10 * time.Second, swr: time.Minute, sie: 24 * time.Hour, store: true, revalidate: true}},
		{"max-age=0", freshness{swr: time.Minute, sie: 24 * time.Hour, store: true, revalidate: true}},
		{"max-age=10, must-revalidate", freshness{ttl: 10 * time.Second, store: true}},
		{"max-age=-1, max-age=abc", freshness{ttl: 5 * time.Minute, swr: time.Minute, sie: 24 * time.Hour, store: true}},
		{"max-age=9999999999999999999, s-maxage=99999999999999999999999", freshness{ttl: maxDirectiveSeconds * time.Second, swr: time.Minute, sie: 24 * time.Hour, store: true}},
	} {
		if got := freshnessOf(c.header, p); got != c.want {
			t.Errorf("%q: %+v; want %+v", c.header, got, c.want)
		}
	}
	if _, _, _, n := policyDefaults(p); n != 0 {
		t.Errorf("NegativeTTL 0s: %v", n)
	}
	if _, _, _, n := policyDefaults(site.EdgePolicy{}); n != 10*time.Second {
		t.Errorf("default NegativeTTL: %v", n)
	}
}

// FuzzCacheControl checks the parser of upstream Cache-Control headers never
// panics and always yields usable durations.
func FuzzCacheControl(f *testing.F) {
	for _, s := range []string{"", "max-age=60", `no-cache="a,b", s-maxage=1`, "stale-if-error=86400,private", `"`, `a="\`, "max-age=" + "9999999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		fr := freshnessOf(v, site.EdgePolicy{})
		if fr.ttl < 0 || fr.swr < 0 || fr.sie < 0 {
			t.Fatalf("%q: negative durations %+v", v, fr)
		}
		if max := maxDirectiveSeconds * time.Second; fr.ttl > max || fr.swr > max || fr.sie > max {
			t.Fatalf("%q: durations past the cap %+v", v, fr)
		}
	})
}
