package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"mime/multipart"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/golang-jwt/jwt/v5"

	adminv1 "github.com/coffer/coffer/proto/gen/coffer/admin/v1"
	"github.com/coffer/coffer/proto/gen/coffer/admin/v1/adminv1connect"
)

const platformSecret = "e2e-platform-secret-0123456789"

// tenantEnv is the environment of a server with tenants on.
func tenantEnv() []string {
	key := make([]byte, 32)
	rand.Read(key)
	return []string{"COFFER_TENANTS=true", "COFFER_PLATFORM_SECRET=" + platformSecret,
		"COFFER_TENANT_KEY=" + base64.StdEncoding.EncodeToString(key), "COFFER_DEFAULT_TENANT_HOSTS=default.test",
		"COFFER_WEBHOOK_ALLOW_NETWORKS=127.0.0.0/8", "COFFER_ACCESS_LOG=off",
		"COFFER_TENANT_PATH_PREFIX=true", "COFFER_TRUSTED_PROXIES=127.0.0.1/32"}
}

// tenantSide is one tenant of the matrix and what the test made in it.
type tenantSide struct {
	id, host, adminSecret, jwtKey string
	fileID, subID                 string
	onlyBucket                    string // a bucket only this tenant has
}

// userToken signs a user JWT for tenant s.
func (s *tenantSide) userToken(t *testing.T, key, user string) string {
	t.Helper()
	now := time.Now()
	tok := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{
		"sub": user, "iat": now.Unix(), "exp": now.Add(time.Hour).Unix(),
		"https://hasura.io/jwt/claims": map[string]any{
			"x-hasura-default-role": "user", "x-hasura-allowed-roles": []string{"user"}, "x-hasura-user-id": user,
		},
	})
	out, err := tok.SignedString([]byte(key))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// answer is a response reduced to what a client can tell apart.
type answer struct {
	status int
	body   string
}

// blank replaces the ids in a's body by "{id}".
func (a answer) blank(ids ...string) answer {
	for _, id := range ids {
		a.body = strings.ReplaceAll(a.body, id, "{id}")
	}
	return a
}

var requestIDs = regexp.MustCompile(`request id [A-Za-z0-9-]+`)

// hit sends one request to p with Host host and headers hdr, and returns its answer
// (request ids blanked, so two answers compare by content).
func hit(t *testing.T, p *proc, host, method, path string, body []byte, hdr ...string) answer {
	t.Helper()
	r := sendTo(t, p, host, method, path, string(body), hdr...)
	return answer{r.status, requestIDs.ReplaceAllString(r.body, "request id X")}
}

// tenantClient is a TenantService client for the platform admin on p.
func tenantClient(p *proc) adminv1connect.TenantServiceClient {
	return adminv1connect.NewTenantServiceClient(http.DefaultClient, p.url, connect.WithInterceptors(headerInterceptor{
		"X-Coffer-Platform-Secret": platformSecret, "Host": "default.test"}))
}

// headerInterceptor sets request headers (and the Host) on every call.
type headerInterceptor map[string]string

func (h headerInterceptor) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		for k, v := range h {
			req.Header().Set(k, v)
		}
		return next(ctx, req)
	}
}
func (h headerInterceptor) WrapStreamingClient(n connect.StreamingClientFunc) connect.StreamingClientFunc {
	return n
}
func (h headerInterceptor) WrapStreamingHandler(n connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return n
}

// setUpTenant creates tenant s through TenantService and fills it: a bucket
// "avatars" both tenants have, one only s has, a file "same.txt" in avatars, a
// webhook subscription.
func setUpTenant(t *testing.T, p *proc, s *tenantSide) {
	t.Helper()
	ctx := context.Background()
	_, err := tenantClient(p).CreateTenant(ctx, connect.NewRequest(&adminv1.CreateTenantRequest{
		Id: s.id, Hosts: []string{s.host},
		Settings: &adminv1.TenantSettings{AdminSecrets: []string{s.adminSecret}, Jwt: `{"type":"HS256","key":"` + s.jwtKey + `"}`},
	}))
	if err != nil {
		t.Fatalf("create tenant %s: %v", s.id, err)
	}
	admin := []string{"X-Hasura-Admin-Secret", s.adminSecret, "Content-Type", "application/json"}
	for _, b := range []string{"avatars", s.onlyBucket} {
		if a := hit(t, p, s.host, "POST", "/v1/buckets", []byte(`{"id":"`+b+`"}`), admin...); a.status != http.StatusCreated {
			t.Fatalf("%s: create bucket %s: %+v", s.id, b, a)
		}
	}
	s.fileID = uploadAs(t, p, s.host, "avatars", "same.txt", "bytes of "+s.id, "X-Hasura-Admin-Secret", s.adminSecret)
	a := hit(t, p, s.host, "POST", "/v1/webhooks", []byte(`{"url":"http://127.0.0.1:9/hook"}`), admin...)
	var sub struct{ ID string }
	if a.status != http.StatusCreated || json.Unmarshal([]byte(a.body), &sub) != nil || sub.ID == "" {
		t.Fatalf("%s: create webhook: %+v", s.id, a)
	}
	s.subID = sub.ID
}

// uploadAs uploads one file through host and returns its id.
func uploadAs(t *testing.T, p *proc, host, bucket, name, content string, hdr ...string) string {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	mw.WriteField("bucket-id", bucket)
	fw, _ := mw.CreateFormFile("file[]", name)
	fw.Write([]byte(content))
	mw.Close()
	a := hit(t, p, host, "POST", "/v1/files", body.Bytes(), append(hdr, "Content-Type", mw.FormDataContentType())...)
	var out struct {
		ProcessedFiles []struct{ ID string } `json:"processedFiles"`
	}
	if a.status != http.StatusCreated || json.Unmarshal([]byte(a.body), &out) != nil || len(out.ProcessedFiles) != 1 {
		t.Fatalf("upload to %s: %+v", host, a)
	}
	return out.ProcessedFiles[0].ID
}

// TestTenantIsolation runs the cross-tenant matrix on SQLite and disk, and on
// PostgreSQL and S3.
func TestTenantIsolation(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		tenantMatrix(t, start(t, append(tenantEnv(), "COFFER_DATA_DIR="+t.TempDir())...))
	})
	t.Run("postgres+s3", func(t *testing.T) {
		tenantMatrix(t, start(t, append(append(scaleEnv(t), tenantEnv()...), "COFFER_DATA_DIR="+t.TempDir())...))
	})
}

// route is one HTTP route of the /v1 face, with {file}, {bucket}, {sub} in its
// path filled from a tenant's resources.
type route struct {
	method, path, body string
}

var tenantRoutes = []route{
	{"GET", "/v1/files/{file}", ""}, {"HEAD", "/v1/files/{file}", ""},
	{"GET", "/v1/files/{file}/metadata", ""}, {"PATCH", "/v1/files/{file}/metadata", `{"metadata":{"x":1}}`},
	{"GET", "/v1/files/{file}/presignedurl", ""}, {"GET", "/v1/files/{file}/presignedurl/contents", ""},
	{"PUT", "/v1/files/{file}", ""}, {"DELETE", "/v1/files/{file}", ""},
	{"GET", "/v1/buckets/{bucket}", ""}, {"PATCH", "/v1/buckets/{bucket}", `{"public":true}`},
	{"GET", "/v1/buckets/{bucket}/files", ""}, {"DELETE", "/v1/buckets/{bucket}", ""},
	{"GET", "/v1/webhooks/{sub}", ""}, {"GET", "/v1/webhooks/{sub}/deliveries", ""},
	{"POST", "/v1/webhooks/{sub}/deliveries/1/redeliver", ""}, {"DELETE", "/v1/webhooks/{sub}", ""},
}

// fill puts file, bucket and sub into r's path.
func (r route) fill(file, bucket, sub string) string {
	return strings.NewReplacer("{file}", file, "{bucket}", bucket, "{sub}", sub).Replace(r.path)
}

func tenantMatrix(t *testing.T, p *proc) {
	alpha := &tenantSide{id: "alpha", host: "alpha.test", adminSecret: "alpha-admin-secret-0123", jwtKey: strings.Repeat("a", 32), onlyBucket: "alpha-only"}
	beta := &tenantSide{id: "beta", host: "beta.test", adminSecret: "beta-admin-secret-01234", jwtKey: strings.Repeat("b", 32), onlyBucket: "beta-only"}
	setUpTenant(t, p, alpha)
	setUpTenant(t, p, beta)
	actors := map[string][]string{
		"admin":     {"X-Hasura-Admin-Secret", alpha.adminSecret},
		"user":      {"Authorization", "Bearer " + alpha.userToken(t, alpha.jwtKey, "u1")},
		"anonymous": nil,
	}
	const missingFile, missingBucket, missingSub = "00000000-0000-4000-8000-00000000dead", "no-such-bucket", "00000000-0000-4000-8000-00000000beef"
	successes := 0
	for name, creds := range actors {
		for _, r := range tenantRoutes {
			hdr := append([]string{"Content-Type", "application/json"}, creds...)
			// An answer may name the id it was asked for: that is the caller's own
			// input, so both are compared with their ids blanked.
			got := hit(t, p, alpha.host, r.method, r.fill(beta.fileID, beta.onlyBucket, beta.subID), []byte(r.body), hdr...).
				blank(beta.fileID, beta.onlyBucket, beta.subID)
			want := hit(t, p, alpha.host, r.method, r.fill(missingFile, missingBucket, missingSub), []byte(r.body), hdr...).
				blank(missingFile, missingBucket, missingSub)
			if got.status < 400 {
				successes++
			}
			if got != want {
				t.Errorf("alpha's %s, %s %s on beta's resource: %+v; on a missing one: %+v", name, r.method, r.path, got, want)
			}
		}
	}
	// Tenant alpha's credentials on beta's host: refused exactly as wrong ones are.
	wrong := map[string][2][]string{
		"admin secret": {{"X-Hasura-Admin-Secret", alpha.adminSecret}, {"X-Hasura-Admin-Secret", "not-a-secret-of-anyone-01"}},
		"user JWT":     {{"Authorization", "Bearer " + alpha.userToken(t, alpha.jwtKey, "u1")}, {"Authorization", "Bearer " + alpha.userToken(t, strings.Repeat("z", 32), "u1")}},
	}
	for name, pair := range wrong {
		for _, r := range tenantRoutes {
			path := r.fill(beta.fileID, "avatars", beta.subID)
			got := hit(t, p, beta.host, r.method, path, []byte(r.body), pair[0]...)
			want := hit(t, p, beta.host, r.method, path, []byte(r.body), pair[1]...)
			if got.status < 400 {
				successes++
			}
			if got != want || (got.status != http.StatusUnauthorized && r.method != "HEAD") {
				t.Errorf("alpha's %s on beta's host, %s %s: %+v; a wrong one: %+v", name, r.method, r.path, got, want)
			}
		}
	}
	// An upload into the other tenant's bucket answers as one into a missing bucket.
	for name, creds := range actors {
		upload := func(bucket string) answer {
			var body bytes.Buffer
			mw := multipart.NewWriter(&body)
			mw.WriteField("bucket-id", bucket)
			fw, _ := mw.CreateFormFile("file[]", "x.txt")
			fw.Write([]byte("x"))
			mw.Close()
			return hit(t, p, alpha.host, "POST", "/v1/files", body.Bytes(), append([]string{"Content-Type", mw.FormDataContentType()}, creds...)...)
		}
		got, want := upload(beta.onlyBucket).blank(beta.onlyBucket), upload(missingBucket).blank(missingBucket)
		if got.status < 400 {
			successes++
		}
		if got != want {
			t.Errorf("alpha's %s uploading into beta's bucket: %+v; into a missing one: %+v", name, got, want)
		}
	}
	if successes != 0 {
		t.Errorf("%d cross-tenant requests succeeded", successes)
	}
	checkListsOwnOnly(t, p, alpha, beta)
	checkRPCIsolation(t, p, alpha, beta)
	checkBetaIntact(t, p, beta)
	checkHostileHosts(t, p, alpha)
}

// checkListsOwnOnly: alpha's listings show none of beta's buckets, files or hooks.
func checkListsOwnOnly(t *testing.T, p *proc, alpha, beta *tenantSide) {
	admin := []string{"X-Hasura-Admin-Secret", alpha.adminSecret}
	for _, path := range []string{"/v1/buckets", "/v1/buckets/avatars/files", "/v1/webhooks", "/v1/rules"} {
		a := hit(t, p, alpha.host, "GET", path, nil, admin...)
		if a.status != http.StatusOK || strings.Contains(a.body, beta.fileID) || strings.Contains(a.body, beta.onlyBucket) || strings.Contains(a.body, beta.subID) {
			t.Errorf("alpha's %s: %+v", path, a)
		}
	}
	for _, path := range []string{"/v1/ops/list-orphans", "/v1/ops/list-not-uploaded", "/v1/ops/list-broken-metadata"} {
		a := hit(t, p, alpha.host, "POST", path, nil, admin...)
		if a.status != http.StatusOK || strings.Contains(a.body, beta.fileID) {
			t.Errorf("alpha's %s: %+v", path, a)
		}
	}
}

// checkRPCIsolation: through the management API on alpha's host, alpha's admin
// gets NotFound for beta's resources exactly as for missing ones, and on beta's
// host alpha's secret is refused as unauthenticated.
func checkRPCIsolation(t *testing.T, p *proc, alpha, beta *tenantSide) {
	ctx := context.Background()
	on := func(host string, creds ...string) (adminv1connect.FileServiceClient, adminv1connect.BucketServiceClient, adminv1connect.WebhookServiceClient) {
		h := headerInterceptor{"Host": host}
		for i := 0; i+1 < len(creds); i += 2 {
			h[creds[i]] = creds[i+1]
		}
		opt := connect.WithInterceptors(h)
		return adminv1connect.NewFileServiceClient(http.DefaultClient, p.url, opt),
			adminv1connect.NewBucketServiceClient(http.DefaultClient, p.url, opt),
			adminv1connect.NewWebhookServiceClient(http.DefaultClient, p.url, opt)
	}
	actors := map[string][]string{
		"admin":     {"X-Hasura-Admin-Secret", alpha.adminSecret},
		"user":      {"Authorization", "Bearer " + alpha.userToken(t, alpha.jwtKey, "u1")},
		"anonymous": nil,
	}
	for name, creds := range actors {
		files, buckets, hooks := on(alpha.host, creds...)
		for call, c := range rpcCalls(ctx, files, buckets, hooks) {
			got, want := c(beta.fileID, beta.onlyBucket, beta.subID), c("00000000-0000-4000-8000-00000000dead", "no-such-bucket", "00000000-0000-4000-8000-00000000beef")
			if got == nil || connect.CodeOf(got) != connect.CodeOf(want) || (name == "admin" && connect.CodeOf(got) != connect.CodeNotFound) {
				t.Errorf("alpha's %s, RPC %s on beta's resource: %v; on a missing one: %v", name, call, got, want)
			}
		}
	}
	_, buckets, _ := on(alpha.host, actors["admin"]...)
	checkRPCServerState(t, p, alpha, beta, buckets)
	_, _, hooksOnBeta := on(beta.host, actors["admin"]...)
	_, err := hooksOnBeta.ListWebhooks(ctx, connect.NewRequest(&adminv1.ListWebhooksRequest{}))
	if connect.CodeOf(err) != connect.CodeUnauthenticated {
		t.Errorf("alpha's secret on beta's host, RPC ListWebhooks: %v", err)
	}
	_, err = tenantClient(p).GetTenant(ctx, connect.NewRequest(&adminv1.GetTenantRequest{Id: beta.id}))
	if err != nil {
		t.Errorf("the platform admin reads beta: %v", err)
	}
	tc := adminv1connect.NewTenantServiceClient(http.DefaultClient, p.url, connect.WithInterceptors(headerInterceptor{
		"X-Hasura-Admin-Secret": alpha.adminSecret, "Host": alpha.host}))
	if _, err := tc.GetTenant(ctx, connect.NewRequest(&adminv1.GetTenantRequest{Id: beta.id})); err == nil {
		t.Error("alpha's admin read tenant beta through TenantService")
	}
}

// rpcCalls are the management calls that name a file, bucket or webhook.
func rpcCalls(ctx context.Context, files adminv1connect.FileServiceClient, buckets adminv1connect.BucketServiceClient,
	hooks adminv1connect.WebhookServiceClient) map[string]func(file, bucket, sub string) error {
	type call = func(file, bucket, sub string) error
	calls := map[string]call{
		"GetFile": func(f, _, _ string) error {
			_, err := files.GetFile(ctx, connect.NewRequest(&adminv1.GetFileRequest{Id: f}))
			return err
		},
		"DeleteFile": func(f, _, _ string) error {
			_, err := files.DeleteFile(ctx, connect.NewRequest(&adminv1.DeleteFileRequest{Id: f}))
			return err
		},
		"GetBucket": func(_, b, _ string) error {
			_, err := buckets.GetBucket(ctx, connect.NewRequest(&adminv1.GetBucketRequest{Id: b}))
			return err
		},
		"DeleteBucket": func(_, b, _ string) error {
			_, err := buckets.DeleteBucket(ctx, connect.NewRequest(&adminv1.DeleteBucketRequest{Id: b}))
			return err
		},
		"GetWebhook": func(_, _, s string) error {
			_, err := hooks.GetWebhook(ctx, connect.NewRequest(&adminv1.GetWebhookRequest{Id: s}))
			return err
		},
		"UpdateFile": func(f, _, _ string) error {
			name := "renamed.txt"
			_, err := files.UpdateFile(ctx, connect.NewRequest(&adminv1.UpdateFileRequest{Id: f, Name: &name}))
			return err
		},
		"PresignFile": func(f, _, _ string) error {
			_, err := files.PresignFile(ctx, connect.NewRequest(&adminv1.PresignFileRequest{Id: f}))
			return err
		},
		"ListFiles": func(_, b, _ string) error {
			_, err := files.ListFiles(ctx, connect.NewRequest(&adminv1.ListFilesRequest{BucketId: b}))
			return err
		},
		"UpdateBucket": func(_, b, _ string) error {
			_, err := buckets.UpdateBucket(ctx, connect.NewRequest(&adminv1.UpdateBucketRequest{Id: b, Settings: &adminv1.BucketSettings{}}))
			return err
		},
		"DeleteWebhook": func(_, _, s string) error {
			_, err := hooks.DeleteWebhook(ctx, connect.NewRequest(&adminv1.DeleteWebhookRequest{Id: s}))
			return err
		},
		"ListDeliveries": func(_, _, s string) error {
			_, err := hooks.ListDeliveries(ctx, connect.NewRequest(&adminv1.ListDeliveriesRequest{WebhookId: s}))
			return err
		},
		"RedeliverDelivery": func(_, _, s string) error {
			_, err := hooks.RedeliverDelivery(ctx, connect.NewRequest(&adminv1.RedeliverDeliveryRequest{WebhookId: s, DeliveryId: 1}))
			return err
		},
	}
	return calls
}

// checkRPCServerState: the node's own state is the platform operator's; a tenant
// admin's listings are its own.
func checkRPCServerState(t *testing.T, p *proc, alpha, beta *tenantSide, buckets adminv1connect.BucketServiceClient) {
	ctx := context.Background()
	srv := adminv1connect.NewServerServiceClient(http.DefaultClient, p.url, connect.WithInterceptors(headerInterceptor{
		"X-Hasura-Admin-Secret": alpha.adminSecret, "Host": alpha.host}))
	if _, err := srv.GetCacheStats(ctx, connect.NewRequest(&adminv1.GetCacheStatsRequest{})); connect.CodeOf(err) != connect.CodePermissionDenied {
		t.Errorf("a tenant admin's GetCacheStats: %v", err)
	}
	if _, err := srv.GetImageWorkers(ctx, connect.NewRequest(&adminv1.GetImageWorkersRequest{})); connect.CodeOf(err) != connect.CodePermissionDenied {
		t.Errorf("a tenant admin's GetImageWorkers: %v", err)
	}
	list, err := buckets.ListBuckets(ctx, connect.NewRequest(&adminv1.ListBucketsRequest{}))
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range list.Msg.GetBuckets() {
		if b.GetId() == beta.onlyBucket {
			t.Errorf("alpha's ListBuckets shows beta's bucket %s", b.GetId())
		}
	}
}

// checkBetaIntact: after the matrix, beta's file, bucket and hook are as made.
func checkBetaIntact(t *testing.T, p *proc, beta *tenantSide) {
	admin := []string{"X-Hasura-Admin-Secret", beta.adminSecret}
	if a := hit(t, p, beta.host, "GET", "/v1/files/"+beta.fileID, nil, admin...); a.status != http.StatusOK || a.body != "bytes of beta" {
		t.Errorf("beta's file after the matrix: %+v", a)
	}
	for _, path := range []string{"/v1/buckets/" + beta.onlyBucket, "/v1/webhooks/" + beta.subID} {
		if a := hit(t, p, beta.host, "GET", path, nil, admin...); a.status != http.StatusOK {
			t.Errorf("beta's %s after the matrix: %+v", path, a)
		}
	}
}

// checkHostileHosts: Host values a client may send resolve to the right tenant or
// get a clean 4xx, never a 5xx or another tenant.
func checkHostileHosts(t *testing.T, p *proc, alpha *tenantSide) {
	path := "/v1/files/" + alpha.fileID
	admin := []string{"X-Hasura-Admin-Secret", alpha.adminSecret}
	for host, wantOK := range map[string]bool{
		"alpha.test": true, "ALPHA.TEST": true, "alpha.test.": true, "alpha.test:8000": true, "Alpha.Test.:443": true,
		"xn--lpha-2na.test": false, "alpha.test..": false, "alpha.test:99999": false, "": false,
		strings.Repeat("a", 300) + ".test": false, "alpha.test@beta.test": false, "beta.test": false, "unknown.test": false,
	} {
		a := hit(t, p, host, "GET", path, nil, admin...)
		if ok := a.status == http.StatusOK && a.body == "bytes of alpha"; ok != wantOK || a.status >= 500 {
			t.Errorf("Host %q: %d %.80s (want served: %v)", host, a.status, a.body, wantOK)
		}
	}
	// A tenant by path prefix (the host names none) and by X-Forwarded-Host from a
	// trusted proxy (127.0.0.1 here); a host naming a tenant wins over the path.
	for _, c := range []struct {
		host, path string
		hdr        []string
		want       int
	}{
		{"default.test", "/t/alpha" + path, nil, http.StatusOK},
		{"unknown.test", "/t/alpha" + path, nil, http.StatusOK},
		{"beta.test", "/t/alpha" + path, nil, http.StatusUnauthorized}, // beta's: alpha's secret is refused there
		{"unknown.test", path, []string{"X-Forwarded-Host", "alpha.test"}, http.StatusOK},
		{"unknown.test", path, []string{"X-Forwarded-Host", "beta.test, alpha.test"}, http.StatusOK}, // the right-most, the proxy's
	} {
		a := hit(t, p, c.host, "GET", c.path, nil, append(admin, c.hdr...)...)
		if a.status != c.want || (c.want == http.StatusOK && a.body != "bytes of alpha") {
			t.Errorf("Host %q %s %v: %d %.80s, want %d", c.host, c.path, c.hdr, a.status, a.body, c.want)
		}
	}
	for _, raw := range []string{
		"GET " + path + " HTTP/1.0\r\n\r\n",                                        // no Host at all
		"GET " + path + " HTTP/1.1\r\nHost: alpha.test\r\nHost: beta.test\r\n\r\n", // two
		"GET " + path + " HTTP/1.1\r\nHost: alph\u00e4.test\r\n\r\n",               // a Unicode twin
		"GET " + path + " HTTP/1.1\r\nHost: alpha.test\rX: y\r\n\r\n",              // a bare CR
	} {
		status := rawStatus(t, p, raw)
		if status < 400 || status >= 500 {
			t.Errorf("raw request %q: status %d, want a 4xx", raw, status)
		}
	}
}

// rawStatus writes raw to p and returns the status of its answer.
func rawStatus(t *testing.T, p *proc, raw string) int {
	t.Helper()
	conn, err := dialProc(p)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := conn.Write([]byte(raw)); err != nil {
		t.Fatal(err)
	}
	var status int
	line := make([]byte, 64)
	n, _ := io.ReadAtLeast(conn, line, 12)
	fmt.Sscanf(string(line[:n]), "HTTP/1.%d %d", new(int), &status)
	return status
}

// dialProc opens a TCP connection to p's API port.
func dialProc(p *proc) (net.Conn, error) {
	return net.Dial("tcp", strings.TrimPrefix(p.url, "http://"))
}

// TestTenantQuota: 50 concurrent uploads into a tenant whose quota allows 10 files:
// at most 10 commit, the others are refused with 507 and a message naming the
// quota, and the usage the management API reports is exactly what is stored.
func TestTenantQuota(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		quotaRun(t, start(t, append(tenantEnv(), "COFFER_DATA_DIR="+t.TempDir())...))
	})
	t.Run("postgres+s3", func(t *testing.T) {
		quotaRun(t, start(t, append(append(scaleEnv(t), tenantEnv()...), "COFFER_DATA_DIR="+t.TempDir())...))
	})
}

func quotaRun(t *testing.T, p *proc) {
	ctx := context.Background()
	const secret = "quota-admin-secret-0123"
	_, err := tenantClient(p).CreateTenant(ctx, connect.NewRequest(&adminv1.CreateTenantRequest{
		Id: "quota", Hosts: []string{"quota.test"}, Quota: &adminv1.Quota{MaxFiles: 10},
		Settings: &adminv1.TenantSettings{AdminSecrets: []string{secret}},
	}))
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		a    answer
		size int
	}
	results := make(chan result, 50)
	for i := range 50 {
		go func() {
			var body bytes.Buffer
			mw := multipart.NewWriter(&body)
			mw.WriteField("bucket-id", "default")
			fw, _ := mw.CreateFormFile("file[]", fmt.Sprintf("f%d.bin", i))
			content := bytes.Repeat([]byte{byte(i)}, 1000+i)
			fw.Write(content)
			mw.Close()
			results <- result{hit(t, p, "quota.test", "POST", "/v1/files", body.Bytes(),
				"X-Hasura-Admin-Secret", secret, "Content-Type", mw.FormDataContentType()), len(content)}
		}()
	}
	var committed, refused int
	var bytesStored int64
	for range 50 {
		r := <-results
		switch {
		case r.a.status == http.StatusCreated:
			committed++
			bytesStored += int64(r.size)
		case r.a.status == http.StatusInsufficientStorage && strings.Contains(r.a.body, "quota"):
			refused++
		default:
			t.Errorf("upload: %+v", r.a)
		}
	}
	t.Logf("50 concurrent uploads, quota 10 files: %d committed, %d refused (507)", committed, refused)
	if committed > 10 || committed+refused != 50 {
		t.Fatalf("%d committed, %d refused", committed, refused)
	}
	u, err := tenantClient(p).GetTenantUsage(ctx, connect.NewRequest(&adminv1.GetTenantUsageRequest{Id: "quota"}))
	if err != nil {
		t.Fatal(err)
	}
	if got := u.Msg.GetUsage(); got.GetFiles() != int64(committed) || got.GetBytes() != bytesStored {
		t.Errorf("usage %d files %d bytes, stored %d files %d bytes", got.GetFiles(), got.GetBytes(), committed, bytesStored)
	}
	// The refused uploads' bytes are gone too: no blob is left without its row.
	if a := hit(t, p, "quota.test", "POST", "/v1/ops/list-orphans", nil, "X-Hasura-Admin-Secret", secret); a.status != http.StatusOK || strings.Contains(a.body, "f/") {
		t.Errorf("orphans after the refusals: %+v", a)
	}
}

// TestTenantChangesReachOtherNodes: two nodes on one PostgreSQL and S3; a tenant
// created, suspended and resumed through node A is served, refused and served again
// by node B, each within a second (the registry's NOTIFY; the 2 s poll is the
// fallback).
func TestTenantChangesReachOtherNodes(t *testing.T) {
	env := append(scaleEnv(t), tenantEnv()...) // one tenant key for both nodes
	a, b := start(t, append(env, "COFFER_DATA_DIR="+t.TempDir())...), start(t, append(env, "COFFER_DATA_DIR="+t.TempDir())...)
	ctx := context.Background()
	const secret = "nodes-admin-secret-0123"
	seen := func(want int) time.Duration {
		t.Helper()
		t0 := time.Now()
		for time.Since(t0) < 5*time.Second {
			if hit(t, b, "nodes.test", "GET", "/v1/buckets/default", nil, "X-Hasura-Admin-Secret", secret).status == want {
				return time.Since(t0)
			}
			time.Sleep(5 * time.Millisecond)
		}
		t.Fatalf("node B did not answer %d within 5 s", want)
		return 0
	}
	_, err := tenantClient(a).CreateTenant(ctx, connect.NewRequest(&adminv1.CreateTenantRequest{
		Id: "nodes", Hosts: []string{"nodes.test"}, Settings: &adminv1.TenantSettings{AdminSecrets: []string{secret}}}))
	if err != nil {
		t.Fatal(err)
	}
	created := seen(http.StatusOK)
	if _, err := tenantClient(a).SuspendTenant(ctx, connect.NewRequest(&adminv1.SuspendTenantRequest{Id: "nodes"})); err != nil {
		t.Fatal(err)
	}
	suspended := seen(http.StatusForbidden)
	if _, err := tenantClient(a).ResumeTenant(ctx, connect.NewRequest(&adminv1.ResumeTenantRequest{Id: "nodes"})); err != nil {
		t.Fatal(err)
	}
	resumed := seen(http.StatusOK)
	t.Logf("node B saw node A's create after %v, suspend after %v, resume after %v", created, suspended, resumed)
	for _, d := range []time.Duration{created, suspended, resumed} {
		if d > time.Second {
			t.Errorf("a change took %v to reach the other node", d)
		}
	}
}

// TestTenantDeletePurges: a deleted tenant is refused at once, and its rows and
// blobs are removed in the background; another tenant's stay.
func TestTenantDeletePurges(t *testing.T) {
	dir := t.TempDir()
	p := start(t, append(tenantEnv(), "COFFER_DATA_DIR="+dir)...)
	ctx := context.Background()
	for _, id := range []string{"gone", "kept"} {
		_, err := tenantClient(p).CreateTenant(ctx, connect.NewRequest(&adminv1.CreateTenantRequest{
			Id: id, Hosts: []string{id + ".test"}, Settings: &adminv1.TenantSettings{AdminSecrets: []string{id + "-admin-secret-0123"}}}))
		if err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			uploadAs(t, p, id+".test", "default", fmt.Sprintf("f%d.txt", i), "bytes of "+id, "X-Hasura-Admin-Secret", id+"-admin-secret-0123")
		}
	}
	blobs := func(id string) int {
		n := 0
		filepath.WalkDir(filepath.Join(dir, "blobs", "objects", "t", id), func(_ string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				n++
			}
			return nil
		})
		return n
	}
	if blobs("gone") != 3 || blobs("kept") != 3 {
		t.Fatalf("blobs before: gone %d, kept %d", blobs("gone"), blobs("kept"))
	}
	if _, err := tenantClient(p).DeleteTenant(ctx, connect.NewRequest(&adminv1.DeleteTenantRequest{Id: "gone"})); err != nil {
		t.Fatal(err)
	}
	if a := hit(t, p, "gone.test", "GET", "/v1/buckets/default", nil, "X-Hasura-Admin-Secret", "gone-admin-secret-0123"); a.status != http.StatusForbidden {
		t.Errorf("a tenant being deleted: %+v", a)
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		_, err := tenantClient(p).GetTenant(ctx, connect.NewRequest(&adminv1.GetTenantRequest{Id: "gone"}))
		if connect.CodeOf(err) == connect.CodeNotFound {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("tenant gone still there after 15 s: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if blobs("gone") != 0 || blobs("kept") != 3 {
		t.Errorf("blobs after: gone %d, kept %d", blobs("gone"), blobs("kept"))
	}
	if a := hit(t, p, "gone.test", "GET", "/v1/buckets/default", nil); a.status != http.StatusNotFound {
		t.Errorf("a deleted tenant's host: %+v", a)
	}
	if a := hit(t, p, "kept.test", "GET", "/v1/buckets/default/files", nil, "X-Hasura-Admin-Secret", "kept-admin-secret-0123"); a.status != http.StatusOK || strings.Count(a.body, `"id"`) < 3 {
		t.Errorf("the other tenant's files: %+v", a)
	}
}

// TestTenantOwnS3: a tenant whose storage target is its own S3 bucket (under a
// prefix) keeps its blobs there, not in the server's store; its secret key is never
// answered.
func TestTenantOwnS3(t *testing.T) {
	env := scaleEnv(t) // for the S3 server; this node itself runs on SQLite and disk
	var endpoint, access, secretKey string
	for _, e := range env {
		k, v, _ := strings.Cut(e, "=")
		switch k {
		case "COFFER_S3_ENDPOINT":
			endpoint = v
		case "COFFER_S3_ACCESS_KEY":
			access = v
		case "COFFER_S3_SECRET_KEY":
			secretKey = v
		}
	}
	dir := t.TempDir()
	p := start(t, append(tenantEnv(), "COFFER_DATA_DIR="+dir)...)
	ctx := context.Background()
	const secret = "owns3-admin-secret-0123"
	resp, err := tenantClient(p).CreateTenant(ctx, connect.NewRequest(&adminv1.CreateTenantRequest{
		Id: "owns3", Hosts: []string{"owns3.test"}, Settings: &adminv1.TenantSettings{
			AdminSecrets: []string{secret},
			Storage: &adminv1.TenantStorage{Kind: "s3", Endpoint: endpoint, Region: "us-east-1", Bucket: fmt.Sprintf("coffer-e2e-own-%d", os.Getpid()),
				Prefix: "acme/files", AccessKeyId: access, SecretAccessKey: secretKey, PathStyle: true},
		}}))
	if err != nil {
		t.Fatal(err)
	}
	if st := resp.Msg.GetTenant().GetSettings().GetStorage(); st.GetSecretAccessKey() != "" || !st.GetSecretAccessKeySet() {
		t.Errorf("the answered storage settings: %v", st)
	}
	id := uploadAs(t, p, "owns3.test", "default", "own.txt", "bytes kept in the tenant's bucket", "X-Hasura-Admin-Secret", secret)
	if a := hit(t, p, "owns3.test", "GET", "/v1/files/"+id, nil, "X-Hasura-Admin-Secret", secret); a.status != http.StatusOK || a.body != "bytes kept in the tenant's bucket" {
		t.Fatalf("download: %+v", a)
	}
	if _, err := os.Stat(filepath.Join(dir, "blobs", "objects", "t", "owns3")); !os.IsNotExist(err) {
		t.Errorf("the tenant's blob is in the server's store: %v", err)
	}
}

// TestTenantBlobsSurviveDefaultSweeps: the default tenant's sweeps (the one at start,
// and delete-orphans through its API) never take a tenant's blobs for orphans.
func TestTenantBlobsSurviveDefaultSweeps(t *testing.T) {
	dir, env := t.TempDir(), tenantEnv()
	p := start(t, append(env, "COFFER_DATA_DIR="+dir)...)
	const secret = "sweep-admin-secret-0123"
	_, err := tenantClient(p).CreateTenant(context.Background(), connect.NewRequest(&adminv1.CreateTenantRequest{
		Id: "sweep", Hosts: []string{"sweep.test"}, Settings: &adminv1.TenantSettings{AdminSecrets: []string{secret}}}))
	if err != nil {
		t.Fatal(err)
	}
	id := uploadAs(t, p, "sweep.test", "default", "kept.txt", "a tenant's bytes", "X-Hasura-Admin-Secret", secret)
	for _, path := range []string{"/v1/ops/delete-orphans", "/v1/ops/sweep"} {
		if a := hit(t, p, "default.test", "POST", path, nil, "X-Hasura-Admin-Secret", adminSecret); a.status != http.StatusOK || strings.Contains(a.body, "t/sweep") {
			t.Errorf("the default tenant's %s: %+v", path, a)
		}
	}
	p.stop()
	p = start(t, append(env, "COFFER_DATA_DIR="+dir)...) // its startup sweep
	if a := hit(t, p, "sweep.test", "GET", "/v1/files/"+id, nil, "X-Hasura-Admin-Secret", secret); a.status != http.StatusOK || a.body != "a tenant's bytes" {
		t.Errorf("the tenant's file after the default tenant's sweeps: %+v", a)
	}
}
