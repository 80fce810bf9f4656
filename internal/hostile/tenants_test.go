package hostile

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coffer/coffer/app"
	"github.com/golang-jwt/jwt/v5"
)

// The multi-tenant server's deployment settings: the platform admin's secret, the
// default tenant's host (the one that also serves /t/{tenant}/ paths), and the
// wildcard suffix whose first label names a tenant (a.w.test is tenant a).
const (
	platformSecret = "hostile-platform-secret-0123456789"
	defaultHost    = "files.test"
	wildSuffix     = "w.test"
)

// tenantSide is one tenant of a tenantServer and what the harness made in it: a
// public bucket "shared" every tenant has, a private bucket of its own, a file of
// its admin in each, a file of user "u1" in "shared", and a webhook subscription.
type tenantSide struct {
	id, host, adminSecret, jwtKey string
	only                          string // the private bucket only this tenant has
	pubFile, privFile, userFile   string // file ids
	sub                           string // webhook subscription id
}

// wildHost is the tenant's name under the wildcard.
func (ts *tenantSide) wildHost() string { return ts.id + "." + wildSuffix }

// admin returns the tenant admin's header; user a user's bearer token of this
// tenant.
func (ts *tenantSide) admin() []string { return []string{"X-Hasura-Admin-Secret", ts.adminSecret} }
func (ts *tenantSide) user(id string) []string {
	return []string{"Authorization", "Bearer " + signToken(ts.jwtKey, id)}
}

// tenantServer is coffer with --tenants as a multi-tenant deployment runs it:
// tenants a (host a.test) and b (host b.test), both also reached as {id}.w.test and
// by the /t/{id}/ path prefix on the default tenant's host files.test, 127.0.0.1 a
// trusted proxy, sites on, h2c on. Its embedded server is the default tenant's
// (do and rawDo send Host files.test).
type tenantServer struct {
	*server
	a, b *tenantSide
}

// newTenantServer starts a tenantServer and fills both tenants.
func newTenantServer(t *testing.T) *tenantServer {
	t.Helper()
	s := startServer(t, defaultHost, func(c *app.Config) {
		c.H2C = true
		c.Tenants.On, c.Tenants.PlatformSecret = true, platformSecret
		c.Tenants.Key = base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32))
		c.Tenants.DefaultHosts, c.Tenants.Wildcards = []string{defaultHost}, []string{"*." + wildSuffix}
		c.Tenants.PathPrefix, c.Tenants.TrustedProxies = true, []string{"127.0.0.1/32"}
	})
	ts := &tenantServer{server: s}
	ts.a = ts.addTenant("a")
	ts.b = ts.addTenant("b")
	return ts
}

// tenantRules are every tenant's rules: role "user" uploads into both its buckets
// and reads, replaces and deletes only what it uploaded; anonymous clients read the
// public bucket "shared" (its public flag).
const tenantRules = `
rules:
  - role: user
    buckets: [shared, %s]
    upload: {presets: {uploaded_by_user_id: X-Hasura-User-Id}}
    read: {filter: ` + ownerRule + `}
    replace: {filter: ` + ownerRule + `}
    delete: {filter: ` + ownerRule + `}
`

// addTenant creates tenant id through TenantService and fills it.
func (ts *tenantServer) addTenant(id string) *tenantSide {
	ts.t.Helper()
	side := &tenantSide{id: id, host: id + ".test", adminSecret: "hostile-" + id + "-admin-secret-0123",
		jwtKey: strings.Repeat(id, 40)[:40], only: id + "-only"}
	ts.fillTenant(side)
	return side
}

// fillTenant creates tenant side.id through TenantService with side's host,
// secret and key, and fills it as addTenant does.
func (ts *tenantServer) fillTenant(side *tenantSide) {
	t := ts.t
	t.Helper()
	id := side.id
	create := fmt.Sprintf(`{"id":%q,"hosts":[%q],"settings":{"adminSecrets":[%q],"jwt":%q}}`,
		id, side.host, side.adminSecret, `{"type":"HS256","key":"`+side.jwtKey+`"}`)
	ts.mustRPC(http.StatusOK, defaultHost, "TenantService/CreateTenant", create, "X-Coffer-Platform-Secret", platformSecret)
	admin := side.admin()
	for _, b := range []string{`{"id":"shared","public":true}`, `{"id":"` + side.only + `"}`} {
		ts.mustHost(http.StatusCreated, side.host, "POST", "/v1/buckets", b, append(admin, "Content-Type", "application/json")...)
	}
	doc, _ := json.Marshal(map[string]string{"document": fmt.Sprintf(tenantRules, side.only)})
	ts.mustRPC(http.StatusOK, side.host, "RuleService/PutRules", string(doc), admin...)
	side.pubFile = ts.upload(side.host, "shared", "pub.txt", "public bytes of "+id, admin...)
	side.privFile = ts.upload(side.host, side.only, "priv.txt", "private bytes of "+id, admin...)
	side.userFile = ts.upload(side.host, "shared", "user.txt", "user bytes of "+id, side.user("u1")...)
	a := ts.mustHost(http.StatusCreated, side.host, "POST", "/v1/webhooks", `{"url":"http://127.0.0.1:9/hook"}`,
		append(admin, "Content-Type", "application/json")...)
	var sub struct{ ID string }
	if json.Unmarshal(a.body, &sub); sub.ID == "" {
		t.Fatalf("%s: creating a webhook: %s", id, a.body)
	}
	side.sub = sub.ID
}

// hostDo sends a request with Host host (headers as name, value pairs).
func (s *server) hostDo(host, method, path, body string, hdr ...string) answer {
	s.t.Helper()
	return s.doAt(host, method, path, strings.NewReader(body), hdr...)
}

// mustHost is hostDo for a request that must answer want.
func (s *server) mustHost(want int, host, method, path, body string, hdr ...string) answer {
	s.t.Helper()
	a := s.hostDo(host, method, path, body, hdr...)
	if a.status != want {
		s.t.Fatalf("%s %s %s: %d, want %d: %s", host, method, path, a.status, want, bytes.TrimSpace(a.body))
	}
	return a
}

// rpc calls a management method ("FileService/GetFile") with a JSON body over the
// Connect protocol, with Host host.
func (s *server) rpc(host, method, body string, hdr ...string) answer {
	s.t.Helper()
	return s.hostDo(host, "POST", "/coffer.admin.v1."+method, body, append([]string{"Content-Type", "application/json"}, hdr...)...)
}

// mustRPC is rpc for a call that must answer want.
func (s *server) mustRPC(want int, host, method, body string, hdr ...string) answer {
	s.t.Helper()
	a := s.rpc(host, method, body, hdr...)
	if a.status != want {
		s.t.Fatalf("%s %s: %d, want %d: %s", host, method, a.status, want, bytes.TrimSpace(a.body))
	}
	return a
}

// upload stores one file through host and returns its id.
func (s *server) upload(host, bucket, name, content string, hdr ...string) string {
	s.t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	mw.WriteField("bucket-id", bucket)
	fw, _ := mw.CreateFormFile("file[]", name)
	fw.Write([]byte(content))
	mw.Close()
	a := s.mustHost(http.StatusCreated, host, "POST", "/v1/files", body.String(), append(hdr, "Content-Type", mw.FormDataContentType())...)
	var out struct {
		ProcessedFiles []struct{ ID string } `json:"processedFiles"`
	}
	if json.Unmarshal(a.body, &out); len(out.ProcessedFiles) != 1 || out.ProcessedFiles[0].ID == "" {
		s.t.Fatalf("%s: upload %s/%s: %s", host, bucket, name, a.body)
	}
	return out.ProcessedFiles[0].ID
}

// signToken returns an HS256 token signed with key for role "user" and user id
// user.
func signToken(key, user string) string {
	claims := jwt.MapClaims{
		"sub": user, "exp": time.Now().Add(time.Hour).Unix(), "iat": time.Now().Unix(),
		"https://hasura.io/jwt/claims": map[string]any{
			"x-hasura-default-role": "user", "x-hasura-allowed-roles": []string{"user"}, "x-hasura-user-id": user,
		},
	}
	s, err := jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString([]byte(key))
	if err != nil {
		panic(err)
	}
	return s
}
