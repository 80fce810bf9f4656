package hostile

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// TestHostileIndex: the root page "/" of every tenant's hosts (exact, wildcard,
// the default's, a /t/{tenant}/ prefix) sends a browser only to a same-origin path
// of the console and gives other clients the JSON index; no target makes it
// redirect elsewhere (protocol-relative "//x", "/\x", absolute-form targets), and
// odd methods and Accept headers get a clear answer, never a 5xx.
func TestHostileIndex(t *testing.T) {
	ts := newTenantServer(t)
	tl := ts.tally("index")
	hosts := []struct{ host, prefix string }{
		{defaultHost, ""}, {ts.a.host, ""}, {ts.b.wildHost(), ""}, {defaultHost, "/t/a"},
	}
	accepts := []string{"text/html", "TEXT/HTML;q=0.9", "application/xhtml+xml", "*/*", "", "application/json",
		"text/html" + strings.Repeat(",x/y", 2000), "text/htmlx", ";;;,,,"}
	for _, h := range hosts {
		for _, target := range []string{h.prefix + "/", h.prefix} {
			if target == "" {
				continue
			}
			for _, acc := range accepts {
				a := ts.hostDo(h.host, "GET", target, "", "Accept", acc)
				wrong := indexWrong(a, h.prefix)
				if target == h.prefix && a.status == http.StatusNotFound {
					wrong = "" // "/t/a" names the tenant but no path in it: a plain 404, as before
				}
				tl.probe(fmt.Sprintf("%s GET %s Accept %.20q", h.host, target, acc), a, wrong)
			}
		}
		for _, m := range []string{"POST", "PUT", "DELETE", "OPTIONS", "PATCH"} {
			a := ts.hostDo(h.host, m, h.prefix+"/", "x", "Accept", "text/html")
			wrong := ""
			if a.status >= 500 || a.status == http.StatusSeeOther || a.status == http.StatusOK && m != "OPTIONS" {
				wrong = fmt.Sprintf("%s /: %d", m, a.status)
			}
			tl.probe(h.host+" "+m+" /", a, wrong)
		}
	}
	// Targets a browser might resolve off-site if echoed in Location.
	for _, target := range []string{"//evil.test/", "/\\evil.test/", "/%2f%2fevil.test/", "//evil.test", "/t/a//", "/t/a/\\evil.test"} {
		a := ts.raw("GET", "GET "+target+" HTTP/1.1\r\nHost: "+defaultHost+"\r\nAccept: text/html\r\nConnection: close\r\n\r\n")
		tl.probe("raw GET "+target, a, offSite(a))
	}
	a := ts.raw("GET", "GET http://evil.test/ HTTP/1.1\r\nHost: "+defaultHost+"\r\nAccept: text/html\r\nConnection: close\r\n\r\n")
	tl.probe("absolute-form GET http://evil.test/", a, offSite(a))
	tl.done()
}

// indexWrong says what is wrong with a root page answer under prefix: a 303 must go
// to prefix + "/console/", anything else must be the JSON index (a browser with the
// console on never gets it, but the Accept forms that do not ask for HTML do).
func indexWrong(a answer, prefix string) string {
	switch a.status {
	case http.StatusSeeOther:
		if loc := a.header.Get("Location"); loc != prefix+"/console/" {
			return "redirected to " + loc
		}
		return ""
	case http.StatusOK:
		var doc struct{ Name, API string }
		if json.Unmarshal(a.body, &doc) != nil || doc.Name != "coffer" || doc.API != "/v1/" {
			return "200 that is not the JSON index: " + string(a.body)
		}
		return ""
	}
	return fmt.Sprintf("status %d", a.status)
}

// offSite says what is wrong if a redirects anywhere but a same-origin path.
func offSite(a answer) string {
	if a.status >= 500 {
		return fmt.Sprintf("status %d", a.status)
	}
	loc := a.header.Get("Location")
	if loc != "" && (!strings.HasPrefix(loc, "/") || strings.HasPrefix(loc, "//") || strings.HasPrefix(loc, "/\\")) {
		return "redirected off-site: " + loc
	}
	return ""
}
