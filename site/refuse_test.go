package site

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/coffer/coffer"
)

// TestParseRefusesRedirects: a redirect target browsers would read as
// scheme-relative ("/\host": a backslash is "/" to them), or with control
// characters, tabs or spaces, is refused.
func TestParseRefusesRedirects(t *testing.T) {
	for _, to := range []string{`/\evil.invalid`, `\/evil.invalid`, `\\evil.invalid`, `//evil.invalid`, `/\/evil.invalid`,
		`/a\b`, `https://good.test\@evil.invalid/`, `https:\\evil.invalid`, "/\t/evil.invalid", "\t//evil.invalid",
		"/ /evil.invalid", "/\x00x", "/x\x7f", "/\r\nLocation: x", " //evil.invalid"} {
		doc, _ := json.Marshal(to)
		_, err := Parse([]byte(withRoute(`{"path":"/*","target":{"redirect":{"to":` + string(doc) + `}}}`)))
		if coffer.ErrorCode(err) != coffer.EINVALID || coffer.ErrorField(err) != "routes[0].target.redirect.to" {
			t.Errorf("redirect to %q: %v, want EINVALID naming routes[0].target.redirect.to", to, err)
		}
	}
	for _, to := range []string{"/new/:splat", "/", "https://elsewhere.test/a?b=c"} {
		if _, err := Parse([]byte(withRoute(`{"path":"/*","target":{"redirect":{"to":"` + to + `"}}}`))); err != nil {
			t.Errorf("redirect to %q: %v", to, err)
		}
	}
}

// TestParseRefusesProxyControl: routes and header rules may not set the headers a
// server or CDN in front acts on; the error names the header.
func TestParseRefusesProxyControl(t *testing.T) {
	bucket := `"target":{"bucket":{"id":"web"}}`
	for _, h := range []string{"X-Accel-Redirect", "x-accel-buffering", "X-Accel-Expires", "X-Accel-Limit-Rate", "X-Sendfile",
		"X-Sendfile-Type", "X-Lighttpd-Send-File", "X-LiteSpeed-Location", "X-Litespeed-Cache-Control", "CDN-Cache-Control",
		"Cloudflare-CDN-Cache-Control", "Surrogate-Control", "Edge-Control", "X-Reproxy-URL"} {
		docs := map[string]string{
			withRoute(`{"path":"/*",` + bucket + `,"headers":{"` + h + `":"/internal/secret"}}`):                          "routes[0].headers." + h,
			strings.Replace(minimal, `"id":"s"`, `"id":"s","headers":[{"match":"*","set":{"`+h+`":"max-age=99999"}}]`, 1): "headers[0].set." + h,
		}
		for doc, field := range docs {
			_, err := Parse([]byte(doc))
			if coffer.ErrorCode(err) != coffer.EINVALID || coffer.ErrorField(err) != field || !strings.Contains(err.Error(), "proxy-control") {
				t.Errorf("%s: %v (field %q), want EINVALID naming %q", h, err, coffer.ErrorField(err), field)
			}
		}
	}
	for _, h := range []string{"X-Frame-Options", "Content-Security-Policy", "X-Accelerate", "Surrogate-Capability-X", "Vary"} {
		if _, err := Parse([]byte(withRoute(`{"path":"/*",` + bucket + `,"headers":{"` + h + `":"v"}}`))); err != nil {
			t.Errorf("%s: %v", h, err)
		}
	}
}

// TestOriginHeadersWriteOnly: an HTTP origin's headers leave answers as names in
// headersSet; an update naming them keeps their stored values for the same URL,
// one not naming them drops them, and a name with nothing stored is refused.
func TestOriginHeadersWriteOnly(t *testing.T) {
	origin := func(url, extra string) string {
		return withRoute(`{"path":"/*","target":{"http":{"url":"` + url + `"` + extra + `}}}`)
	}
	stored, err := Parse([]byte(origin("http://o.test/", `,"headers":{"Authorization":"Bearer sekrit","X-Tenant":"t"}`)))
	if err != nil {
		t.Fatal(err)
	}
	answer, _ := json.Marshal(stored.Redacted())
	if strings.Contains(string(answer), "sekrit") || !strings.Contains(string(answer), `"headersSet":["Authorization","X-Tenant"]`) {
		t.Fatalf("answer %s", answer)
	}
	if stored.Routes[0].Target.HTTP.Headers["Authorization"] != "Bearer sekrit" {
		t.Fatal("Redacted changed the original")
	}
	// The answer sent back as an update keeps both.
	upd, err := Parse(answer)
	if err != nil {
		t.Fatal(err)
	}
	if err := upd.KeepSecrets(stored); err != nil {
		t.Fatal(err)
	}
	if h := upd.Routes[0].Target.HTTP; h.Headers["Authorization"] != "Bearer sekrit" || h.Headers["X-Tenant"] != "t" || h.HeadersSet != nil {
		t.Errorf("round trip: %+v", h)
	}
	for _, c := range []struct {
		doc  string
		want map[string]string // nil: refused
	}{
		{origin("http://o.test/", `,"headersSet":["authorization"],"headers":{"X-Tenant":"u"}`),
			map[string]string{"Authorization": "Bearer sekrit", "X-Tenant": "u"}},
		{origin("http://o.test/", ``), map[string]string{}},
		{origin("http://o.test/", `,"headersSet":["X-Other"]`), nil},
		{origin("http://elsewhere.test/", `,"headersSet":["Authorization"]`), nil},
	} {
		upd, err := Parse([]byte(c.doc))
		if err != nil {
			t.Fatal(err)
		}
		err = upd.KeepSecrets(stored)
		if c.want == nil {
			if coffer.ErrorCode(err) != coffer.EINVALID || coffer.ErrorField(err) != "routes[0].target.http.headersSet[0]" {
				t.Errorf("%s: %v, want EINVALID naming headersSet[0]", c.doc, err)
			}
			continue
		}
		if h := upd.Routes[0].Target.HTTP.Headers; err != nil || len(h) != len(c.want) || h["Authorization"] != c.want["Authorization"] || h["X-Tenant"] != c.want["X-Tenant"] {
			t.Errorf("%s: %v %v, want %v", c.doc, h, err, c.want)
		}
	}
	fresh, _ := Parse([]byte(origin("http://o.test/", `,"headersSet":["Authorization"]`)))
	if err := fresh.KeepSecrets(nil); coffer.ErrorCode(err) != coffer.EINVALID {
		t.Errorf("a new site naming headers to keep: %v, want EINVALID", err)
	}
}
