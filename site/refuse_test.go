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
