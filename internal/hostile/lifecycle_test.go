package hostile

import (
	"bytes"
	"fmt"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestTenantLifecycle: tenant b, whose files, buckets, webhook and site were all
// served (so every cache holds them), is deleted; its id is refused until its data
// is gone, then taken again by another customer (another host, admin secret and
// token key, buckets of the same names). Anonymous callers, the new admin, a new
// user, and the old admin's and user's credentials then ask, on each way of reaching
// tenant b, for every /v1 route and management method naming one of the old
// tenant's files, buckets and subscriptions: each answers as for a missing one.
// Listings show nothing old; the old site's host serves nothing, and the new
// tenant's site of the same id serves the new tenant's page. Tenant a is intact.
func TestTenantLifecycle(t *testing.T) {
	ts := newTenantServer(t)
	tl := ts.tally("lifecycle")
	old := ts.b
	platform := []string{"X-Coffer-Platform-Secret", platformSecret}
	oldPage := servedSite(ts, old, "www-old.site.test", "the old customer's page")
	warm(ts, old)

	ts.mustRPC(http.StatusOK, defaultHost, "TenantService/DeleteTenant", `{"id":"b"}`, platform...)
	fresh := &tenantSide{id: "b", host: "b2.test", adminSecret: "hostile-b2-admin-secret-0123",
		jwtKey: strings.Repeat("n", 40), only: "b-fresh"}
	create := fmt.Sprintf(`{"id":"b","hosts":[%q],"settings":{"adminSecrets":[%q]}}`, fresh.host, fresh.adminSecret)
	got := ts.rpc(defaultHost, "TenantService/CreateTenant", create, platform...)
	tl.probe("CreateTenant of an id being deleted", got, refusedNaming(got, "being deleted"))
	waitPurged(ts, "b")
	ts.fillTenant(fresh)
	ts.b = fresh

	actors := map[string][]string{"anonymous": nil, "the new admin": fresh.admin(), "a new user": fresh.user("u1"),
		"the old admin's secret": old.admin(), "an old user's token": old.user("u1")}
	ways := []struct{ host, prefix string }{{fresh.host, ""}, {fresh.wildHost(), ""}, {defaultHost, "/t/b"}, {old.host, ""}}
	oldIDs := []string{old.pubFile, old.privFile, old.userFile, old.only, old.sub}
	for name, creds := range actors {
		for _, way := range ways {
			probeOldIDs(ts, tl, name+" via "+way.host+way.prefix, way.host, way.prefix, creds, old)
			for _, path := range []string{"/v1/buckets/shared/files", "/v1/buckets", "/v1/webhooks"} {
				got := ts.hostDo(way.host, "GET", way.prefix+path, "", creds...)
				tl.probe(fmt.Sprintf("%s via %s%s: GET %s", name, way.host, way.prefix, path), got, holdsAny(got, oldIDs...))
			}
			got := ts.rpc(way.host, "FileService/ListFiles", `{"bucketId":"shared"}`, creds...)
			tl.probe(fmt.Sprintf("%s via %s: RPC ListFiles", name, way.host), got, holdsAny(got, oldIDs...))
		}
	}
	got = ts.hostDo("www-old.site.test", "GET", "/index.html", "")
	tl.probe("the old site's host", got, holdsAny(got, oldPage))
	newPage := servedSite(ts, fresh, "www-new.site.test", "the new customer's page")
	got = ts.hostDo("www-new.site.test", "GET", "/index.html", "")
	tl.probe("the new site (same id as the old one)", got, wantBody(got, newPage)+holdsAny(got, oldPage))
	for _, id := range []string{ts.a.pubFile, ts.a.privFile, ts.a.userFile} {
		got := ts.hostDo(ts.a.host, "GET", "/v1/files/"+id, "", ts.a.admin()...)
		tl.probe("tenant a's file "+id+" afterwards", got, wantBody(got, "bytes of a"))
	}
}

// servedSite makes side's site "www" at host over its bucket shared, puts page at
// /index.html, serves it once (so the site's caches hold it) and returns page.
func servedSite(ts *tenantServer, side *tenantSide, host, page string) string {
	ts.t.Helper()
	ts.mustRPC(http.StatusOK, side.host, "SiteService/CreateSite", siteDoc("www", host), side.admin()...)
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	mw.WriteField("bucket-id", "shared")
	mw.WriteField("metadata[]", `{"name":"www/index.html"}`) // a file name of the form loses its directory
	fw, _ := mw.CreateFormFile("file[]", "index.html")
	fw.Write([]byte(page))
	mw.Close()
	ts.mustHost(http.StatusCreated, side.host, "POST", "/v1/files", body.String(), append(side.admin(), "Content-Type", mw.FormDataContentType())...)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if a := ts.hostDo(host, "GET", "/index.html", ""); a.status == http.StatusOK && string(a.body) == page {
			return page
		} else if time.Now().After(deadline) {
			ts.t.Fatalf("site %s of tenant %s: %d %s", host, side.id, a.status, a.body)
		}
	}
}

// warm reads every file, bucket and subscription of side on each way, as anonymous,
// admin and user, twice: the second answers come from the caches.
func warm(ts *tenantServer, side *tenantSide) {
	for range 2 {
		for _, creds := range [][]string{nil, side.admin(), side.user("u1")} {
			for _, way := range []struct{ host, prefix string }{{side.host, ""}, {side.wildHost(), ""}, {defaultHost, "/t/" + side.id}} {
				for _, r := range v1Routes {
					if r.method == "GET" || r.method == "HEAD" {
						for _, file := range []string{side.pubFile, side.privFile, side.userFile} {
							ts.hostDo(way.host, r.method, way.prefix+r.fill(file, side.only, side.sub), "", creds...)
						}
					}
				}
			}
		}
	}
}

// probeOldIDs asks, as creds via host and prefix, for every /v1 route and
// management method naming one of old's files, buckets and subscriptions, and
// compares each answer with the one for missing ids.
func probeOldIDs(ts *tenantServer, tl *tally, who, host, prefix string, creds []string, old *tenantSide) {
	for _, r := range v1Routes {
		for _, file := range []string{old.pubFile, old.privFile, old.userFile} {
			for _, extra := range [][]string{nil, {"Range", "bytes=0-"}} {
				if extra != nil && r.method != "GET" {
					continue
				}
				hdr := append(append([]string{"Content-Type", "application/json"}, creds...), extra...)
				got := ts.hostDo(host, r.method, prefix+r.fill(file, old.only, old.sub), r.body, hdr...).blank(file, old.only, old.sub)
				want := ts.hostDo(host, r.method, prefix+r.fill(missingFile, missingBucket, missingSub), r.body, hdr...).
					blank(missingFile, missingBucket, missingSub)
				tl.probe(fmt.Sprintf("%s: %s %s %v", who, r.method, r.path, extra), got, sameRefusal(got, want))
			}
		}
	}
	for _, r := range rpcRoutes {
		for _, file := range []string{old.pubFile, old.privFile, old.userFile} {
			got := ts.rpc(host, r.method, r.fill(file, old.only, old.sub), creds...).blank(file, old.only, old.sub)
			want := ts.rpc(host, r.method, r.fill(missingFile, missingBucket, missingSub), creds...).blank(missingFile, missingBucket, missingSub)
			tl.probe(fmt.Sprintf("%s: RPC %s", who, r.method), got, sameRefusal(got, want))
		}
	}
}

// waitPurged waits until tenant id is gone from the registry (the background purge).
func waitPurged(ts *tenantServer, id string) {
	ts.t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		a := ts.rpc(defaultHost, "TenantService/GetTenant", `{"id":"`+id+`"}`, "X-Coffer-Platform-Secret", platformSecret)
		if a.status == http.StatusNotFound {
			return
		}
		if time.Now().After(deadline) {
			ts.t.Fatalf("tenant %s not purged within 30 s: %d %s", id, a.status, a.body)
		}
	}
}

// holdsAny is "" unless a's body holds one of parts (something of the old tenant).
func holdsAny(a answer, parts ...string) string {
	for _, p := range parts {
		if bytes.Contains(a.body, []byte(p)) {
			return fmt.Sprintf("answers the old tenant's %q", p)
		}
	}
	return ""
}
