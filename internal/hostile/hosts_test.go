package hostile

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// siteDoc is a site over tenant bucket "shared" on hosts.
func siteDoc(id string, hosts ...string) string {
	q := make([]string, len(hosts))
	for i, h := range hosts {
		q[i] = fmt.Sprintf("%q", h)
	}
	return fmt.Sprintf(`{"site":{"id":%q,"hosts":[%s],"routes":[{"path":"/*","target":{"bucket":{"id":"shared","prefix":"www/"}}}]}}`,
		id, strings.Join(q, ","))
}

// reservedHosts are hosts no site may take on a tenantServer, each with a word its
// refusal must carry, for every kind the server reserves.
var reservedHosts = map[string]string{
	"b.w.test": "wildcard", "B.W.TEST:443": "wildcard", "b.w.test.": "wildcard", // an existing tenant's wildcard name
	"not-yet.w.test": "wildcard", "a.w.test": "wildcard", // a tenant that does not exist yet; one's own
	"files.test": "default tenant", "FILES.test:8000": "default tenant", // the default (and /t/{id}/) host
	"b.test": "tenant", "a.test": "tenant", // tenants' hosts
	"127.0.0.1": "IP address", "[::1]": "IP address", "127.1": "IP address", "0x7f.0.0.1": "IP address",
	"2130706433": "IP address", "[0:0:0:0:0:0:0:1]": "IP address", "10.0.0.1": "IP address",
	"localhost": "loopback", "app.localhost": "loopback", "w.test": "wildcard", // loopback names; the wildcard's domain
}

// TestSiteHostClaims: tenant a's admin (and the default tenant's) cannot make or
// change a site to take a reserved host, each refusal naming the host's kind; the
// platform cannot give a tenant a site's host; tenant b's API, RPC and console
// answer as before on every way of reaching b.
func TestSiteHostClaims(t *testing.T) {
	ts := newTenantServer(t)
	tl := ts.tally("site_hosts")
	a := ts.a
	creators := map[string]struct {
		host string
		cred []string
	}{"tenant a's admin": {a.host, a.admin()}, "the default tenant's admin": {defaultHost, ts.admin()}}
	for who, c := range creators {
		ts.mustRPC(http.StatusOK, c.host, "SiteService/CreateSite", siteDoc("ok", "ok-"+strings.ReplaceAll(c.host, ".", "-")+".site.test"), c.cred...)
		for h, word := range reservedHosts {
			got := ts.rpc(c.host, "SiteService/CreateSite", siteDoc("claim", "fine.site.test", h), c.cred...)
			tl.probe(fmt.Sprintf("%s: CreateSite on %s", who, h), got, refusedNaming(got, word))
			got = ts.rpc(c.host, "SiteService/UpdateSite", `{"id":"ok",`+strings.TrimPrefix(siteDoc("ok", "ok2.site.test", h), "{"), c.cred...)
			tl.probe(fmt.Sprintf("%s: UpdateSite to %s", who, h), got, refusedNaming(got, word))
		}
	}
	// A tenant may not take a site's host, made or changed.
	ts.mustRPC(http.StatusOK, a.host, "SiteService/CreateSite", siteDoc("shop", "shop.site.test"), a.admin()...)
	platform := []string{"X-Coffer-Platform-Secret", platformSecret}
	got := ts.rpc(defaultHost, "TenantService/CreateTenant", `{"id":"c","hosts":["shop.site.test"]}`, platform...)
	tl.probe("CreateTenant on a site's host", got, refusedNaming(got, "site"))
	got = ts.rpc(defaultHost, "TenantService/UpdateTenant", `{"id":"b","hosts":{"hosts":["b.test","SHOP.site.test"]}}`, platform...)
	tl.probe("UpdateTenant to a site's host", got, refusedNaming(got, "site"))
	checkServed(ts, tl, ts.b)
}

// refusedNaming is "" if a is a 4xx whose message carries word.
func refusedNaming(a answer, word string) string {
	switch {
	case a.status < 400 || a.status >= 500:
		return "not refused"
	case !bytes.Contains(bytes.ToLower(a.body), []byte(strings.ToLower(word))):
		return fmt.Sprintf("the refusal does not name the conflict (%q)", word)
	}
	return ""
}

// checkServed: tenant b's public file, RPC and console answer on each of its hosts
// and by path prefix.
func checkServed(ts *tenantServer, tl *tally, b *tenantSide) {
	ways := []struct{ host, prefix string }{{b.host, ""}, {b.wildHost(), ""}, {defaultHost, "/t/" + b.id}}
	for _, way := range ways {
		got := ts.hostDo(way.host, "GET", way.prefix+"/v1/files/"+b.pubFile, "")
		tl.probe("b's file via "+way.host+way.prefix, got, wantBody(got, "public bytes of "+b.id))
		got = ts.hostDo(way.host, "POST", way.prefix+"/coffer.admin.v1.BucketService/GetBucket", `{"id":"`+b.only+`"}`,
			append(b.admin(), "Content-Type", "application/json")...)
		tl.probe("b's RPC via "+way.host+way.prefix, got, wantBody(got, `"`+b.only+`"`))
		got = ts.hostDo(way.host, "GET", way.prefix+"/console/", "")
		tl.probe("b's console via "+way.host+way.prefix, got, wantBody(got, "<html"))
	}
}

// wantBody is "" if a is a 200 whose body holds part.
func wantBody(a answer, part string) string {
	if a.status != http.StatusOK || !bytes.Contains(a.body, []byte(part)) {
		return fmt.Sprintf("want 200 with %q", part)
	}
	return ""
}

// TestHostResolution: the tenant of a request is the Host's, or the right-most
// X-Forwarded-Host value over all its lines when the peer is a trusted proxy
// (127.0.0.1 here, not 127.0.0.2); a target with userinfo is refused; the path
// prefix is matched as sent (/t%2fb/ names no tenant); malformed hosts get a 4xx.
func TestHostResolution(t *testing.T) {
	ts := newTenantServer(t)
	tl := ts.tally("hosts")
	a, b := ts.a, ts.b
	aFile, bFile := "/v1/files/"+a.pubFile, "/v1/files/"+b.pubFile
	aBytes := "public bytes of a"
	lines := func(vs ...string) string {
		var s strings.Builder
		for _, v := range vs {
			s.WriteString("X-Forwarded-Host: " + v + "\r\n")
		}
		return s.String()
	}
	cases := []struct {
		what, src, req string
		served         bool // a's public file is served
	}{
		{"XFH lines client's then proxy's (a)", "", "GET " + aFile + " HTTP/1.1\r\nHost: unknown.test\r\n" + lines("b.test", "a.test"), true},
		{"XFH lines client's (a) then proxy's", "", "GET " + aFile + " HTTP/1.1\r\nHost: unknown.test\r\n" + lines("a.test", "b.test"), false},
		{"XFH list in one line, right-most b", "", "GET " + aFile + " HTTP/1.1\r\nHost: a.test\r\n" + lines("a.test, b.test"), false},
		{"XFH three lines, right-most b", "", "GET " + aFile + " HTTP/1.1\r\nHost: a.test\r\n" + lines("a.test", "a.test, a.w.test", "b.w.test"), false},
		{"XFH from an untrusted peer", "127.0.0.2", "GET " + aFile + " HTTP/1.1\r\nHost: a.test\r\n" + lines("b.test"), true},
		{"XFH from an untrusted peer, two lines", "127.0.0.2", "GET " + bFile + " HTTP/1.1\r\nHost: a.test\r\n" + lines("b.test", "b.test"), false},
		{"userinfo in an absolute-form target", "", "GET http://a.test@b.test" + aFile + " HTTP/1.1\r\nHost: a.test\r\n", false},
		{"userinfo naming b", "", "GET http://b.test@a.test" + aFile + " HTTP/1.1\r\nHost: a.test\r\n", false},
		{"userinfo with a password", "", "GET http://u:p@a.test" + aFile + " HTTP/1.1\r\nHost: a.test\r\n", false},
		{"escaped slash in the path prefix", "", "GET /t%2fa" + aFile + " HTTP/1.1\r\nHost: files.test\r\n", false},
		{"escaped slash in the path prefix (upper)", "", "GET /t%2Fa" + aFile + " HTTP/1.1\r\nHost: files.test\r\n", false},
		{"escaped t in the path prefix", "", "GET /%74/a" + aFile + " HTTP/1.1\r\nHost: files.test\r\n", false},
		{"the path prefix as sent", "", "GET /t/a" + aFile + " HTTP/1.1\r\nHost: files.test\r\n", true},
		{"userinfo in Host", "", "GET " + aFile + " HTTP/1.1\r\nHost: b.test@a.test\r\n", false},
		{"two Host lines", "", "GET " + aFile + " HTTP/1.1\r\nHost: a.test\r\nHost: b.test\r\n", false},
		{"a Unicode twin", "", "GET " + aFile + " HTTP/1.1\r\nHost: \u0430.test\r\n", false},
		{"a bare CR", "", "GET " + aFile + " HTTP/1.1\r\nHost: a.test\rX: y\r\n", false},
		{"no Host (HTTP/1.0)", "", "GET " + aFile + " HTTP/1.0\r\n", false},
		{"a wildcard name two labels deep", "", "GET " + aFile + " HTTP/1.1\r\nHost: x.a.w.test\r\n", false},
	}
	for _, c := range cases {
		got := ts.rawFrom(c.src, "GET", c.req+"Connection: close\r\n\r\n")
		served := got.status == http.StatusOK && string(got.body) == aBytes
		wrong := ""
		switch {
		case served != c.served:
			wrong = fmt.Sprintf("a's file served: %v, want %v", served, c.served)
		case !c.served && got.status < 400:
			wrong = "not refused"
		}
		tl.probe(c.what, got, wrong)
	}
}

// rawFrom writes req on a new connection from source address src ("" = any) and
// reads one answer to method.
func (s *server) rawFrom(src, method, req string) answer {
	d := net.Dialer{Timeout: 10 * time.Second}
	if src != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(src)}
	}
	c, err := d.Dial("tcp", strings.TrimPrefix(s.url, "http://"))
	if err != nil {
		s.t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Minute))
	if _, err := c.Write([]byte(req)); err != nil {
		return answer{body: []byte(err.Error())}
	}
	return readAnswer(http.ReadResponse(bufio.NewReader(c), &http.Request{Method: method}))
}

// TestSitesBehindProxy: behind a trusted proxy that puts its upstream's name in
// Host and the client's in X-Forwarded-Host (nginx's default), a site is chosen by
// the same host as a tenant is: a site that took the upstream's name ("backend")
// never answers for a tenant's forwarded host, on the fast path or net/http's, and
// a site's own forwarded host reaches the site.
func TestSitesBehindProxy(t *testing.T) {
	ts := newTenantServer(t)
	tl := ts.tally("proxy_hosts")
	a, b := ts.a, ts.b
	doc := `{"site":{"id":"up","hosts":["backend","www.a-site.test"],"routes":[{"path":"/*","target":{"redirect":{"to":"/moved/","status":302}}}]}}`
	ts.mustRPC(http.StatusOK, a.host, "SiteService/CreateSite", doc, a.admin()...)
	bFile := "/v1/files/" + b.pubFile
	cases := []struct {
		what, src, method, path, host, xfh string
		want                               func(answer) string
	}{
		{"b's file, Host backend, XFH b.test", "", "GET", bFile, "backend", "b.test", func(a answer) string { return wantBody(a, "public bytes of b") }},
		{"b's file (HEAD), Host backend, XFH b.test", "", "HEAD", bFile, "backend", "b.test", wantStatus(http.StatusOK)},
		{"b's file, Host backend:8000, XFH b.w.test", "", "GET", bFile, "backend:8000", "b.w.test", func(a answer) string { return wantBody(a, "public bytes of b") }},
		{"b's RPC, Host backend, XFH b.test", "", "POST", "/coffer.admin.v1.BucketService/ListBuckets", "backend", "b.test", wantStatus(http.StatusUnauthorized)},
		{"b's console, Host backend, XFH b.test", "", "GET", "/console/", "backend", "b.test", func(a answer) string { return wantBody(a, "<html") }},
		{"the site by its forwarded host", "", "GET", "/x", "127.0.0.1", "www.a-site.test", wantStatus(http.StatusFound)},
		{"the site's host from an untrusted peer", "127.0.0.2", "GET", "/x", "backend", "b.test", wantStatus(http.StatusFound)},
	}
	for _, c := range cases {
		req := fmt.Sprintf("%s %s HTTP/1.1\r\nHost: %s\r\nX-Forwarded-Host: %s\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}",
			c.method, c.path, c.host, c.xfh)
		if c.method != "POST" {
			req = fmt.Sprintf("%s %s HTTP/1.1\r\nHost: %s\r\nX-Forwarded-Host: %s\r\nConnection: close\r\n\r\n", c.method, c.path, c.host, c.xfh)
		}
		got := ts.rawFrom(c.src, c.method, req)
		tl.probe(c.what, got, c.want(got))
	}
}

// wantStatus returns a check that an answer has status want.
func wantStatus(want int) func(answer) string {
	return func(a answer) string {
		if a.status != want {
			return fmt.Sprintf("want %d", want)
		}
		return ""
	}
}
