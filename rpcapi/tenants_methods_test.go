package rpcapi_test

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	adminv1 "github.com/coffer/coffer/proto/gen/coffer/admin/v1"
	"github.com/coffer/coffer/proto/gen/coffer/admin/v1/adminv1connect"
	"github.com/coffer/coffer/rpcapi"
)

// The write-only secrets of the tests' settings (and jwtKey, the key of their JWT
// document): no answer may contain them.
const (
	tenantSecret  = "tenant-a-admin-secret-one"
	tenantSecret2 = "tenant-a-admin-secret-two"
	presignKey    = "tenant-a-presign-key-of-32-bytes-or-more"
	s3Secret      = "tenant-a-s3-secret-access-key"
)

// fullSettings sets every setting, secrets included, and the output-only fields
// (which the face must not pass on).
func fullSettings() *adminv1.TenantSettings {
	return &adminv1.TenantSettings{AdminSecrets: []string{tenantSecret, tenantSecret2}, AdminSecretsCount: 7,
		Jwt: jwtConfig, PresignKey: presignKey, PresignKeySet: true, UnauthorizedRole: "guest",
		Storage: &adminv1.TenantStorage{Kind: "s3", Endpoint: "http://127.0.0.1:9000", Region: "eu-1", Bucket: "a",
			Prefix: "p/", AccessKeyId: "AKID", SecretAccessKey: s3Secret, SecretAccessKeySet: true, PathStyle: true},
		Limits: &adminv1.TenantLimits{RequestsPerSecond: 50, Burst: 100, UserRequestsPerSecond: 5.5, UserBurst: 10,
			BytesPerSecond: 1e6, ImageConcurrency: 2}}
}

// noSecrets fails t if m, in JSON, holds a write-only secret.
func noSecrets(t *testing.T, what string, m proto.Message) {
	t.Helper()
	b, err := protojson.Marshal(m)
	check(t, what+": marshal", err)
	for _, s := range []string{tenantSecret, tenantSecret2, presignKey, s3Secret, jwtKey} {
		if bytes.Contains(b, []byte(s)) {
			t.Fatalf("%s answers a write-only secret: %s", what, b)
		}
	}
}

// TestTenantServiceMethods drives every TenantService method with the platform
// secret, through the generated client: the settings reach the server as
// tenant.Settings (secrets in clear, output-only fields dropped) and come back
// without secrets, saying which are set.
func TestTenantServiceMethods(t *testing.T) {
	e := newTenantEnv(t)
	c := e.asPlatform()
	made, err := c.CreateTenant(ctx(), req(&adminv1.CreateTenantRequest{Id: "acme", Hosts: []string{"acme.files.test"},
		Settings: fullSettings(), Quota: &adminv1.Quota{MaxBytes: 1 << 30, MaxFiles: 1000}}))
	check(t, "CreateTenant", err)
	noSecrets(t, "CreateTenant", made.Msg)
	testStoredSettings(t, e.fake.stored("acme"))
	ten := made.Msg.GetTenant()
	s := ten.GetSettings()
	if ten.GetId() != "acme" || ten.GetState() != adminv1.TenantState_TENANT_STATE_ACTIVE || ten.GetQuota().GetMaxFiles() != 1000 ||
		ten.GetCreateTime() == nil || s.GetAdminSecretsCount() != 2 || !s.GetPresignKeySet() || !s.GetStorage().GetSecretAccessKeySet() ||
		s.GetLimits().GetUserRequestsPerSecond() != 5.5 || s.GetJwt() != `{"key":{"set":true},"type":"HS256"}` || s.GetStorage().GetBucket() != "a" {
		t.Fatalf("created %v", made.Msg)
	}
	_, err = c.CreateTenant(ctx(), req(&adminv1.CreateTenantRequest{Id: "acme"}))
	wantCode(t, "CreateTenant twice", err, connect.CodeAlreadyExists)
	_, err = c.CreateTenant(ctx(), req(&adminv1.CreateTenantRequest{Id: "Acme"}))
	wantField(t, "CreateTenant with a bad id (the server's check)", err, "id")
	got, err := c.GetTenant(ctx(), req(&adminv1.GetTenantRequest{Id: "acme"}))
	check(t, "GetTenant", err)
	noSecrets(t, "GetTenant", got.Msg)
	if !proto.Equal(got.Msg.GetTenant(), ten) {
		t.Fatalf("got %v, created %v", got.Msg, ten)
	}
	_, err = c.GetTenant(ctx(), req(&adminv1.GetTenantRequest{Id: "nope"}))
	wantCode(t, "GetTenant unknown", err, connect.CodeNotFound)
	testTenantUpdate(t, e, c)
	testTenantStates(t, c)
	use, err := c.GetTenantUsage(ctx(), req(&adminv1.GetTenantUsageRequest{Id: "acme"}))
	check(t, "GetTenantUsage", err)
	if u := use.Msg.GetUsage(); u.GetBytes() != 1234 || u.GetFiles() != 5 || u.GetServedBytes() != 999 || u.GetRequests() != 42 {
		t.Fatalf("usage %v", use.Msg)
	}
	_, err = c.GetTenantUsage(ctx(), req(&adminv1.GetTenantUsageRequest{Id: "nope"}))
	wantCode(t, "GetTenantUsage unknown", err, connect.CodeNotFound)
}

// testStoredSettings checks the settings the server was given, as their JSON.
func testStoredSettings(t *testing.T, doc string) {
	for _, want := range []string{`"adminSecrets":["` + tenantSecret + `","` + tenantSecret2 + `"]`, `"presignKey":"` + presignKey + `"`,
		`"jwt":` + jwtConfig,
		`"secretAccessKey":"` + s3Secret + `"`, `"requestsPerSecond":50`, `"userRequestsPerSecond":5.5`, `"burst":100`,
		`"bytesPerSecond":1000000`, `"imageConcurrency":2`, `"pathStyle":true`, `"accessKeyId":"AKID"`, `"unauthorizedRole":"guest"`} {
		if !strings.Contains(strings.ReplaceAll(doc, " ", ""), want) {
			t.Errorf("stored settings %s lack %s", doc, want)
		}
	}
	for _, never := range []string{"adminSecretsCount", "presignKeySet", "secretAccessKeySet", "admin_secrets"} {
		if strings.Contains(doc, never) {
			t.Errorf("stored settings %s hold %s", doc, never)
		}
	}
}

// testTenantUpdate changes only what is given, and lists in pages.
func testTenantUpdate(t *testing.T, e *tenantEnv, c adminv1connect.TenantServiceClient) {
	up, err := c.UpdateTenant(ctx(), req(&adminv1.UpdateTenantRequest{Id: "acme", Hosts: &adminv1.Hosts{Hosts: []string{"*.acme.test"}}}))
	check(t, "UpdateTenant hosts", err)
	noSecrets(t, "UpdateTenant", up.Msg)
	if ten := up.Msg.GetTenant(); len(ten.GetHosts()) != 1 || ten.GetHosts()[0] != "*.acme.test" || ten.GetQuota().GetMaxFiles() != 1000 ||
		ten.GetSettings().GetAdminSecretsCount() != 2 {
		t.Fatalf("updated %v (unset fields must stay)", up.Msg)
	}
	up, err = c.UpdateTenant(ctx(), req(&adminv1.UpdateTenantRequest{Id: "acme", Quota: &adminv1.Quota{MaxBytes: 10},
		Settings: &adminv1.TenantSettings{Limits: &adminv1.TenantLimits{Burst: 3}}}))
	check(t, "UpdateTenant quota and settings", err)
	if ten := up.Msg.GetTenant(); ten.GetQuota().GetMaxBytes() != 10 || ten.GetSettings().GetLimits().GetBurst() != 3 || len(ten.GetHosts()) != 1 {
		t.Fatalf("updated %v", up.Msg)
	}
	if doc := e.fake.stored("acme"); strings.Contains(doc, tenantSecret) || !strings.Contains(doc, `"burst":3`) {
		t.Fatalf("the fake holds %s", doc) // the fake replaces: the merge of secrets is the server's
	}
	_, err = c.UpdateTenant(ctx(), req(&adminv1.UpdateTenantRequest{Id: "nope"}))
	wantCode(t, "UpdateTenant unknown", err, connect.CodeNotFound)
	for _, id := range []string{"b", "c", "d"} {
		_, err = c.CreateTenant(ctx(), req(&adminv1.CreateTenantRequest{Id: id, Settings: &adminv1.TenantSettings{PresignKey: presignKey}}))
		check(t, "CreateTenant "+id, err)
	}
	var ids []string
	token := ""
	for pages := 0; pages < 5; pages++ {
		res, err := c.ListTenants(ctx(), req(&adminv1.ListTenantsRequest{PageSize: 3, PageToken: token}))
		check(t, "ListTenants", err)
		noSecrets(t, "ListTenants", res.Msg)
		for _, ten := range res.Msg.GetTenants() {
			ids = append(ids, ten.GetId())
		}
		if token = res.Msg.GetNextPageToken(); token == "" {
			break
		}
	}
	if strings.Join(ids, ",") != "acme,b,c,d" {
		t.Fatalf("listed %v", ids)
	}
}

// testTenantStates suspends, resumes and deletes tenant acme.
func testTenantStates(t *testing.T, c adminv1connect.TenantServiceClient) {
	sus, err := c.SuspendTenant(ctx(), req(&adminv1.SuspendTenantRequest{Id: "acme"}))
	check(t, "SuspendTenant", err)
	res, err := c.ResumeTenant(ctx(), req(&adminv1.ResumeTenantRequest{Id: "acme"}))
	check(t, "ResumeTenant", err)
	if sus.Msg.GetTenant().GetState() != adminv1.TenantState_TENANT_STATE_SUSPENDED || res.Msg.GetTenant().GetState() != adminv1.TenantState_TENANT_STATE_ACTIVE {
		t.Fatalf("suspended %v, resumed %v", sus.Msg, res.Msg)
	}
	_, err = c.DeleteTenant(ctx(), req(&adminv1.DeleteTenantRequest{Id: "acme"}))
	check(t, "DeleteTenant", err)
	got, err := c.GetTenant(ctx(), req(&adminv1.GetTenantRequest{Id: "acme"}))
	check(t, "GetTenant deleting", err)
	if got.Msg.GetTenant().GetState() != adminv1.TenantState_TENANT_STATE_DELETING {
		t.Fatalf("after DeleteTenant: %v", got.Msg)
	}
	_, err = c.ResumeTenant(ctx(), req(&adminv1.ResumeTenantRequest{Id: "acme"}))
	wantCode(t, "ResumeTenant deleting", err, connect.CodeFailedPrecondition)
	_, err = c.SuspendTenant(ctx(), req(&adminv1.SuspendTenantRequest{Id: "nope"}))
	wantCode(t, "SuspendTenant unknown", err, connect.CodeNotFound)
	_, err = c.DeleteTenant(ctx(), req(&adminv1.DeleteTenantRequest{Id: "nope"}))
	wantCode(t, "DeleteTenant unknown", err, connect.CodeNotFound)
}

// TestTenantServiceJSON: over the Connect protocol's JSON (curl), a misspelt
// setting is INVALID_ARGUMENT (the strict codec), and a well-formed call answers
// the settings without their secrets.
func TestTenantServiceJSON(t *testing.T) {
	e := newTenantEnv(t)
	post := func(body string) (int, string) {
		r, _ := http.NewRequest("POST", e.base+"/coffer.admin.v1.TenantService/CreateTenant", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set(rpcapi.HeaderPlatformSecret, platformSecret)
		resp, err := http.DefaultClient.Do(r)
		check(t, "POST", err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if status, body := post(`{"id":"a","settings":{"adminSecret":"x"}}`); status != 400 || !strings.Contains(body, "invalid_argument") {
		t.Errorf("misspelt setting: %d %s", status, body)
	}
	status, body := post(`{"id":"a","hosts":["a.test"],"settings":{"adminSecrets":["` + tenantSecret + `"],"limits":{"requestsPerSecond":2.5}}}`)
	if status != 200 || strings.Contains(body, tenantSecret) || !strings.Contains(body, `"adminSecretsCount":1`) ||
		!strings.Contains(body, `"requestsPerSecond":2.5`) || !strings.Contains(body, `"state":"TENANT_STATE_ACTIVE"`) {
		t.Errorf("create: %d %s", status, body)
	}
}
