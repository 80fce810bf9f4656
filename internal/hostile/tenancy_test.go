package hostile

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// Ids of nothing: what tenant a's probes of b's resources are compared with.
const (
	missingFile   = "00000000-0000-4000-8000-00000000dead"
	missingBucket = "no-such-bucket"
	missingSub    = "00000000-0000-4000-8000-00000000beef"
)

// v1Route is one route of the /v1 face with {file}, {bucket} and {sub} in it.
type v1Route struct{ method, path, body string }

// v1Routes are the /v1 routes that name a file, bucket or webhook subscription.
var v1Routes = []v1Route{
	{"GET", "/v1/files/{file}", ""}, {"HEAD", "/v1/files/{file}", ""},
	{"GET", "/v1/files/{file}?w=8", ""}, {"GET", "/v1/files/{file}/metadata", ""},
	{"PATCH", "/v1/files/{file}/metadata", `{"metadata":{"x":1}}`},
	{"GET", "/v1/files/{file}/presignedurl", ""}, {"GET", "/v1/files/{file}/presignedurl/contents", ""},
	{"PUT", "/v1/files/{file}", ""}, {"DELETE", "/v1/files/{file}", ""},
	{"GET", "/v1/buckets/{bucket}", ""}, {"PATCH", "/v1/buckets/{bucket}", `{"public":true}`},
	{"GET", "/v1/buckets/{bucket}/files", ""}, {"DELETE", "/v1/buckets/{bucket}", ""},
	{"GET", "/v1/webhooks/{sub}", ""}, {"GET", "/v1/webhooks/{sub}/deliveries", ""},
	{"POST", "/v1/webhooks/{sub}/deliveries/1/redeliver", ""}, {"DELETE", "/v1/webhooks/{sub}", ""},
}

// fill puts ids into r's path.
func (r v1Route) fill(file, bucket, sub string) string {
	return strings.NewReplacer("{file}", file, "{bucket}", bucket, "{sub}", sub).Replace(r.path)
}

// rpcRoute is one management method naming a file, bucket or subscription, with
// its JSON request.
type rpcRoute struct{ method, body string }

// rpcRoutes are the management methods that name a tenant's resource.
var rpcRoutes = []rpcRoute{
	{"FileService/GetFile", `{"id":"{file}"}`}, {"FileService/UpdateFile", `{"id":"{file}","name":"x.txt"}`},
	{"FileService/DeleteFile", `{"id":"{file}"}`}, {"FileService/PresignFile", `{"id":"{file}"}`},
	{"FileService/ListFiles", `{"bucketId":"{bucket}"}`},
	{"BucketService/GetBucket", `{"id":"{bucket}"}`}, {"BucketService/UpdateBucket", `{"id":"{bucket}","settings":{}}`},
	{"BucketService/DeleteBucket", `{"id":"{bucket}"}`},
	{"WebhookService/GetWebhook", `{"id":"{sub}"}`}, {"WebhookService/DeleteWebhook", `{"id":"{sub}"}`},
	{"WebhookService/ListDeliveries", `{"webhookId":"{sub}"}`},
	{"WebhookService/RedeliverDelivery", `{"webhookId":"{sub}","deliveryId":"1"}`},
	{"RuleService/CheckAccess", `{"action":"read","fileId":"{file}","role":"user"}`},
}

// fill puts ids into r's body.
func (r rpcRoute) fill(file, bucket, sub string) string {
	return strings.NewReplacer("{file}", file, "{bucket}", bucket, "{sub}", sub).Replace(r.body)
}

// blank replaces ids in a's body by a placeholder: an answer may repeat the id it
// was asked for, which is the caller's own input.
func (a answer) blank(ids ...string) answer {
	for _, id := range ids {
		a.body = bytes.ReplaceAll(a.body, []byte(id), []byte("ID"))
	}
	return a
}

// sameRefusal is "" if got (on another tenant's resource) answers as want (on a
// missing one) and is a refusal.
func sameRefusal(got, want answer) string {
	switch {
	case got.status < 400:
		return "served another tenant's resource"
	case got.status != want.status || !bytes.Equal(bytes.TrimSpace(got.body), bytes.TrimSpace(want.body)):
		return fmt.Sprintf("answers unlike a missing resource (%d %s)", want.status, bytes.TrimSpace(want.body))
	}
	return ""
}

// TestTenancyMatrix: tenant a's admin, user and anonymous callers, on each way of
// reaching tenant a (its host, its wildcard name, the path prefix on the default
// host), ask for every /v1 route and management method naming one of tenant b's
// files (public, private, a user's), buckets and subscriptions: each answers as for
// a missing resource, on the fast path and net/http's (Range) alike. Then a's
// credentials on b's host are refused as wrong ones are, and b is intact.
func TestTenancyMatrix(t *testing.T) {
	ts := newTenantServer(t)
	tl := ts.tally("tenancy")
	a, b := ts.a, ts.b
	actors := map[string][]string{"admin": a.admin(), "user": a.user("u1"), "anonymous": nil}
	ways := []struct{ host, prefix string }{{a.host, ""}, {a.wildHost(), ""}, {defaultHost, "/t/a"}}
	for name, creds := range actors {
		for _, way := range ways {
			for _, r := range v1Routes {
				for _, file := range []string{b.pubFile, b.privFile, b.userFile} {
					for _, extra := range [][]string{nil, {"Range", "bytes=0-"}} {
						if extra != nil && r.method != "GET" {
							continue
						}
						hdr := append(append([]string{"Content-Type", "application/json"}, creds...), extra...)
						got := ts.hostDo(way.host, r.method, way.prefix+r.fill(file, b.only, b.sub), r.body, hdr...).blank(file, b.only, b.sub)
						want := ts.hostDo(way.host, r.method, way.prefix+r.fill(missingFile, missingBucket, missingSub), r.body, hdr...).
							blank(missingFile, missingBucket, missingSub)
						tl.probe(fmt.Sprintf("a's %s via %s%s: %s %s %v", name, way.host, way.prefix, r.method, r.path, extra), got, sameRefusal(got, want))
					}
				}
			}
			for _, r := range rpcRoutes {
				for _, file := range []string{b.pubFile, b.privFile} {
					got := ts.rpc(way.host, r.method, r.fill(file, b.only, b.sub), creds...).blank(file, b.only, b.sub)
					want := ts.rpc(way.host, r.method, r.fill(missingFile, missingBucket, missingSub), creds...).
						blank(missingFile, missingBucket, missingSub)
					tl.probe(fmt.Sprintf("a's %s via %s: RPC %s", name, way.host, r.method), got, sameRefusal(got, want))
				}
			}
		}
	}
	crossCredentials(ts, tl)
	checkIntact(ts, tl, b)
}

// crossCredentials: tenant a's admin secret and user token on b's host (each way)
// are refused as a wrong secret and a token of an unknown key are.
func crossCredentials(ts *tenantServer, tl *tally) {
	a, b := ts.a, ts.b
	pairs := map[string][2][]string{
		"admin secret": {a.admin(), {"X-Hasura-Admin-Secret", "not-a-secret-of-anyone-0123"}},
		"user token":   {a.user("u1"), {"Authorization", "Bearer " + signToken(strings.Repeat("z", 40), "u1")}},
	}
	ways := []struct{ host, prefix string }{{b.host, ""}, {b.wildHost(), ""}, {defaultHost, "/t/b"}}
	for name, pair := range pairs {
		for _, way := range ways {
			for _, r := range v1Routes {
				path := way.prefix + r.fill(b.privFile, b.only, b.sub)
				got := ts.hostDo(way.host, r.method, path, r.body, pair[0]...)
				want := ts.hostDo(way.host, r.method, path, r.body, pair[1]...)
				tl.probe(fmt.Sprintf("a's %s on b via %s%s: %s %s", name, way.host, way.prefix, r.method, r.path), got, sameRefusal(got, want))
			}
			got := ts.rpc(way.host, "BucketService/ListBuckets", `{}`, pair[0]...)
			want := ts.rpc(way.host, "BucketService/ListBuckets", `{}`, pair[1]...)
			tl.probe(fmt.Sprintf("a's %s on b via %s: RPC ListBuckets", name, way.host), got, sameRefusal(got, want))
		}
	}
	for _, m := range []string{"TenantService/GetTenant", "TenantService/DeleteTenant", "TenantService/UpdateTenant"} {
		got := ts.rpc(a.host, m, `{"id":"b"}`, a.admin()...)
		wrong := ""
		if got.status < 400 {
			wrong = "a tenant admin reached TenantService"
		}
		tl.probe("a's admin: RPC "+m, got, wrong)
	}
}

// checkIntact: b's files, bucket and subscription are as they were made.
func checkIntact(ts *tenantServer, tl *tally, b *tenantSide) {
	for id, want := range map[string]string{b.pubFile: "public bytes of b", b.privFile: "private bytes of b", b.userFile: "user bytes of b"} {
		got := ts.hostDo(b.host, "GET", "/v1/files/"+id, "", b.admin()...)
		wrong := ""
		if got.status != http.StatusOK || string(got.body) != want {
			wrong = "b's file changed"
		}
		tl.probe("b's file "+id+" afterwards", got, wrong)
	}
	for _, path := range []string{"/v1/buckets/" + b.only, "/v1/webhooks/" + b.sub} {
		got := ts.hostDo(b.host, "GET", path, "", b.admin()...)
		wrong := ""
		if got.status != http.StatusOK {
			wrong = "b's resource is gone"
		}
		tl.probe("b's "+path+" afterwards", got, wrong)
	}
}
