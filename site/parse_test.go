package site

import (
	"strings"
	"testing"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/tenant"
)

// minimal is a valid document for the refusal table to break one field of.
const minimal = `{"id":"s","hosts":["a.test"],"routes":[{"path":"/*","target":{"bucket":{"id":"web"}}}]}`

// withRoute is a document with one route given as JSON.
func withRoute(route string) string {
	return `{"id":"s","hosts":["a.test"],"routes":[` + route + `]}`
}

func TestParseAccepts(t *testing.T) {
	s, err := Parse([]byte(testSiteDoc))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Routes) != 8 || s.Routes[2].Target.HTTP.URL != "http://origin.test/v1/" {
		t.Fatalf("parsed %+v", s)
	}
	s, err = Parse([]byte(`{"id":"s","hosts":["WWW.A.test:443"],"routes":[{"path":"/*","target":{"s3":{"bucket":"my-bucket",
	  "endpoint":"http://127.0.0.1:9000","accessKeyId":"AK","secretAccessKey":"SK","timeout":"5s"}},
	  "edge":{"ttl":"60s","negativeTtl":"0s"}}],"purgeWebhooks":[{"url":"https://cdn.test/purge","secret":"x"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if s.Hosts[0] != "www.a.test" {
		t.Errorf("host not normalized: %q", s.Hosts[0])
	}
}

func TestParseRefuses(t *testing.T) {
	route := func(r string) string { return withRoute(r) }
	bucket := `"target":{"bucket":{"id":"web"}}`
	for _, c := range []struct{ doc, field string }{
		{`{"id":"s"} x`, ""},
		{`[]`, ""},
		{strings.Replace(minimal, `"id":"s"`, `"id":"s","extra":1`, 1), "extra"},
		{strings.Replace(minimal, `"id":"s"`, `"id":"S!"`, 1), "id"},
		{strings.Replace(minimal, `"id":"s"`, `"id":5`, 1), "id"},
		{strings.Replace(minimal, `["a.test"]`, `[]`, 1), "hosts"},
		{strings.Replace(minimal, `["a.test"]`, `["a.test","A.TEST"]`, 1), "hosts[1]"},
		{strings.Replace(minimal, `["a.test"]`, `["a b"]`, 1), "hosts[0]"},
		{strings.Replace(minimal, `["a.test"]`, `["u@a.test"]`, 1), "hosts[0]"},
		{`{"id":"s","hosts":["a.test"],"routes":[]}`, "routes"},
		{route(`{"path":"about",` + bucket + `}`), "routes[0].path"},
		{route(`{"path":"/a/../b",` + bucket + `}`), "routes[0].path"},
		{route(`{"path":"/a//b",` + bucket + `}`), "routes[0].path"},
		{route(`{"path":"/a/***",` + bucket + `}`), "routes[0].path"},
		{route(`{"path":"/a?b",` + bucket + `}`), "routes[0].path"},
		{route(`{"path":"/*/*/*/*/*/*/*/*/*",` + bucket + `}`), "routes[0].path"},
		{route(`{"path":"/media/*","stripPrefix":"/other",` + bucket + `}`), "routes[0].stripPrefix"},
		{route(`{"path":"/*","target":{}}`), "routes[0].target"},
		{route(`{"path":"/*","target":{"bucket":{"id":"web"},"redirect":{"to":"/"}}}`), "routes[0].target"},
		{route(`{"path":"/*","target":{"bucket":{"id":"-web"}}}`), "routes[0].target.bucket.id"},
		{route(`{"path":"/*","target":{"bucket":{"id":"web","prefix":"../x/"}}}`), "routes[0].target.bucket.prefix"},
		{route(`{"path":"/*","target":{"bucket":{"id":"web","prefix":"/abs/"}}}`), "routes[0].target.bucket.prefix"},
		{route(`{"path":"/*","target":{"http":{"url":"ftp://x.test/"}}}`), "routes[0].target.http.url"},
		{route(`{"path":"/*","target":{"http":{"url":"http://u:p@x.test/"}}}`), "routes[0].target.http.url"},
		{route(`{"path":"/*","target":{"http":{"url":"http://x.test/?a=1"}}}`), "routes[0].target.http.url"},
		{route(`{"path":"/*","target":{"http":{"url":"http:///path/"}}}`), "routes[0].target.http.url"},
		{route(`{"path":"/*","target":{"http":{"url":"http://x.test/base"}}}`), "routes[0].target.http.url"},
		{route(`{"path":"/*","target":{"http":{"url":"http://x.test/","headers":{"Host":"y"}}}}`), "routes[0].target.http.headers.Host"},
		{route(`{"path":"/*","target":{"http":{"url":"http://x.test/","timeout":"1h"}}}`), "routes[0].target.http.timeout"},
		{route(`{"path":"/*","target":{"s3":{"bucket":"A_B"}}}`), "routes[0].target.s3.bucket"},
		{route(`{"path":"/*","target":{"s3":{"bucket":"abc","endpoint":"http://h.test/path"}}}`), "routes[0].target.s3.endpoint"},
		{route(`{"path":"/*","target":{"s3":{"bucket":"abc","secretAccessKey":"x"}}}`), "routes[0].target.s3.accessKeyId"},
		{route(`{"path":"/*","target":{"redirect":{"to":"/x","status":303}}}`), "routes[0].target.redirect.status"},
		{route(`{"path":"/*","target":{"redirect":{"to":"//evil.test/"}}}`), "routes[0].target.redirect.to"},
		{route(`{"path":"/*","target":{"redirect":{"to":"javascript:alert(1)"}}}`), "routes[0].target.redirect.to"},
		{route(`{"path":"/*",` + bucket + `,"headers":{"Set-Cookie":"a=b"}}`), "routes[0].headers.Set-Cookie"},
		{route(`{"path":"/*",` + bucket + `,"headers":{"content-length":"1"}}`), "routes[0].headers.content-length"},
		{route(`{"path":"/*",` + bucket + `,"headers":{"X-A":"a\r\nb"}}`), "routes[0].headers.X-A"},
		{route(`{"path":"/*",` + bucket + `,"headers":{"X A":"a"}}`), "routes[0].headers"},
		{route(`{"path":"/*",` + bucket + `,"cacheControl":[{"match":"*.js","value":"max-age=1\n"}]}`), "routes[0].cacheControl[0].value"},
		{route(`{"path":"/*",` + bucket + `,"cacheControl":[{"match":"","value":"no-cache"}]}`), "routes[0].cacheControl[0].match"},
		{route(`{"path":"/*",` + bucket + `,"tags":["ok","no space"]}`), "routes[0].tags[1]"},
		{route(`{"path":"/*",` + bucket + `,"tags":[` + strings.Repeat(`"t",`, 20) + `"t"]}`), "routes[0].tags"},
		{route(`{"path":"/*",` + bucket + `,"edge":{"ttl":"800h"}}`), "routes[0].edge.ttl"},
		{route(`{"path":"/*",` + bucket + `,"edge":{"ttl":"-1s"}}`), ""},
		{route(`{"path":"/*",` + bucket + `,"fallback":"index.html"}`), "routes[0].fallback"},
		{route(`{"path":"/*",` + bucket + `,"index":"a/b.html"}`), "routes[0].index"},
		{strings.Replace(minimal, `"id":"s"`, `"id":"s","notFound":"/a/../404.html"`, 1), "notFound"},
		{strings.Replace(minimal, `"id":"s"`, `"id":"s","headers":[{"match":"*.html","set":{}}]`, 1), "headers[0].set"},
		{strings.Replace(minimal, `"id":"s"`, `"id":"s","purgeWebhooks":[{"url":"file:///x"}]`, 1), "purgeWebhooks[0].url"},
	} {
		_, err := Parse([]byte(c.doc))
		if coffer.ErrorCode(err) != coffer.EINVALID || coffer.ErrorField(err) != c.field {
			t.Errorf("%s: %v (field %q), want EINVALID naming %q", c.doc, err, coffer.ErrorField(err), c.field)
		}
	}
	if _, err := Parse(make([]byte, MaxDocSize+1)); coffer.ErrorCode(err) != coffer.ETOOLARGE {
		t.Errorf("oversized: %v", err)
	}
}

func TestRouteKeys(t *testing.T) {
	c := compileDoc(t, testSiteDoc)
	for _, k := range []struct{ path, route, key string }{
		{"/", "/*", "site/index.html"},
		{"/a/b/", "/*", "site/a/b/index.html"},
		{"/old/x", "/old/*", ""},
		{"/api/v/x.json", "/api/*", "v/x.json"},
		{"/media/a.png", "/media/*", "m/a.png"},
		{"/docs/x.md", "/docs/*.md", "docs/x.md"},
		{"/docs/a/x.md", "/*", "site/docs/a/x.md"},
		{"/app/", "/app/*", "app/index.html"},
	} {
		r, key, ok := c.Route(k.path)
		if !ok || r.Path != k.route || key != k.key {
			t.Errorf("Route(%q) = %v %q %v, want %q %q", k.path, r.Path, key, ok, k.route, k.key)
		}
	}
	if c.Scope != "t1/www" {
		t.Errorf("scope %q", c.Scope)
	}
}

func TestSecrets(t *testing.T) {
	sealer, err := tenant.NewSealer(make([]byte, 32))
	if err != nil {
		t.Fatal(err)
	}
	doc := `{"id":"s","hosts":["a.test"],"routes":[{"path":"/*","target":{"s3":{"bucket":"abc","endpoint":"http://127.0.0.1:9000",
	  "accessKeyId":"AK","secretAccessKey":"plain-secret"}}}],"purgeWebhooks":[{"url":"https://cdn.test/p","secret":"hook-secret"}]}`
	s, err := Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Prepare(sealer, "t1"); err != nil {
		t.Fatal(err)
	}
	o := s.Routes[0].Target.S3
	if !tenant.IsSealed(o.SecretAccessKey) || !tenant.IsSealed(s.PurgeWebhooks[0].Secret) {
		t.Fatalf("not sealed: %q %q", o.SecretAccessKey, s.PurgeWebhooks[0].Secret)
	}
	if got, err := o.OpenSecretAccessKey(sealer, "t1", "s"); err != nil || got != "plain-secret" {
		t.Errorf("open: %q %v", got, err)
	}
	if _, err := o.OpenSecretAccessKey(sealer, "t2", "s"); err == nil {
		t.Error("opened for another tenant")
	}
	if got, err := s.PurgeWebhooks[0].OpenSecret(sealer, "t1", "s"); err != nil || got != "hook-secret" {
		t.Errorf("webhook secret: %q %v", got, err)
	}
	r := s.Redacted()
	if ro := r.Routes[0].Target.S3; ro.SecretAccessKey != "" || !ro.SecretAccessKeySet || r.PurgeWebhooks[0].Secret != "" || !r.PurgeWebhooks[0].SecretSet {
		t.Errorf("redacted: %+v %+v", ro, r.PurgeWebhooks[0])
	}
	if o.SecretAccessKey == "" {
		t.Error("Redacted changed the original")
	}
	for _, c := range []struct {
		endpoint, url string
		keep          bool
	}{{"http://127.0.0.1:9000", "https://cdn.test/p", true}, {"http://127.0.0.1:9001", "https://other.test/p", false}} {
		upd, err := Parse([]byte(strings.NewReplacer(`,"secretAccessKey":"plain-secret"`, "", `,"secret":"hook-secret"`, "",
			"http://127.0.0.1:9000", c.endpoint, "https://cdn.test/p", c.url).Replace(doc)))
		if err != nil {
			t.Fatal(err)
		}
		upd.KeepSecrets(s)
		kept := upd.Routes[0].Target.S3.SecretAccessKey == o.SecretAccessKey && upd.PurgeWebhooks[0].Secret == s.PurgeWebhooks[0].Secret
		if kept != c.keep {
			t.Errorf("%s %s: kept %v, want %v", c.endpoint, c.url, kept, c.keep)
		}
		if err := upd.Prepare(sealer, "t1"); (err == nil) != c.keep {
			t.Errorf("%s: Prepare of an update without a secret: %v", c.endpoint, err)
		}
	}
}
