package rpcapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"mime/multipart"
	"net"
	"net/http"
	"net/netip"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/golang-jwt/jwt/v5"

	"github.com/coffer/coffer/app"
	"github.com/coffer/coffer/internal/apptest"
	adminv1 "github.com/coffer/coffer/proto/gen/coffer/admin/v1"
	"github.com/coffer/coffer/proto/gen/coffer/admin/v1/adminv1connect"
)

const (
	adminSecret = "rpc-test-admin-secret"
	jwtKey      = "rpc-test-hs256-key-of-at-least-32-bytes!"
	jwtConfig   = `{"type":"HS256","key":"` + jwtKey + `"}`
	// testRules let role user read, change and delete its own files in bucket docs.
	testRules = `
rules:
  - role: user
    buckets: [docs]
    upload: {presets: {uploaded_by_user_id: X-Hasura-User-Id}}
    read: {filter: {uploaded_by_user_id: {_eq: X-Hasura-User-Id}}}
    replace: {filter: {uploaded_by_user_id: {_eq: X-Hasura-User-Id}}}
    delete: {filter: {uploaded_by_user_id: {_eq: X-Hasura-User-Id}}}
`
)

// env is coffer started through app on 127.0.0.1 (SQLite and blobs in a temp dir),
// with the admin secret, HS256 JWTs and --h2c.
type env struct {
	t    testing.TB
	base string
	main *app.Main
}

// newEnv starts coffer; adjust, if given, changes its settings first.
func newEnv(t testing.TB, adjust ...func(*app.Config, *app.Parts)) *env {
	cfg := apptest.Config(t)
	cfg.AdminSecret, cfg.JWTSecret, cfg.H2C = adminSecret, jwtConfig, true
	cfg.Webhooks.AllowNetworks = []string{"127.0.0.0/8"}
	parts := app.Parts{Resolver: stubResolver{}}
	for _, a := range adjust {
		a(&cfg, &parts)
	}
	m := apptest.Start(t, cfg, parts, slog.New(slog.DiscardHandler))
	return &env{t: t, base: "http://" + m.Addr().String(), main: m}
}

// stubResolver resolves hooks.test to 127.0.0.1 (allowed above) for the webhook
// guard, and no other name: tests never ask the system resolver.
type stubResolver struct{}

// LookupNetIP answers hooks.test.
func (stubResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if host == "hooks.test" {
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	}
	return nil, &net.DNSError{Err: "no such host (stub)", Name: host, IsNotFound: true}
}

// headerTransport adds headers to every request.
type headerTransport struct {
	rt  http.RoundTripper
	hdr http.Header
}

// RoundTrip sends r with the headers.
func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.hdr {
		r.Header[k] = v
	}
	return h.rt.RoundTrip(r)
}

// httpClient returns an HTTP/1.1 client that sends hdr (key, value pairs).
func httpClient(hdr ...string) *http.Client {
	h := http.Header{}
	for i := 0; i+1 < len(hdr); i += 2 {
		h.Set(hdr[i], hdr[i+1])
	}
	return &http.Client{Transport: headerTransport{rt: http.DefaultTransport, hdr: h}, Timeout: 30 * time.Second}
}

// h2cClient returns a client that speaks HTTP/2 without TLS (prior knowledge) and
// sends hdr.
func h2cClient(hdr ...string) *http.Client {
	c := httpClient(hdr...)
	tr := &http.Transport{Protocols: new(http.Protocols)}
	tr.Protocols.SetUnencryptedHTTP2(true)
	c.Transport = headerTransport{rt: tr, hdr: c.Transport.(headerTransport).hdr}
	return c
}

// asAdmin, asUser and anonymous are the callers of the tests.
func asAdmin() *http.Client { return httpClient("X-Hasura-Admin-Secret", adminSecret) }
func asUser(t *testing.T, user string) *http.Client {
	return httpClient("Authorization", "Bearer "+token(t, "user", user))
}
func anonymous() *http.Client { return httpClient() }

// token returns a signed HS256 token for role and user.
func token(t *testing.T, role, user string) string {
	claims := jwt.MapClaims{"sub": user, "exp": time.Now().Add(time.Hour).Unix(), "iat": time.Now().Unix(),
		"https://hasura.io/jwt/claims": map[string]any{"x-hasura-default-role": role,
			"x-hasura-allowed-roles": []string{role}, "x-hasura-user-id": user}}
	s, err := jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString([]byte(jwtKey))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// clients are the generated clients of every service, over one HTTP client.
type clients struct {
	buckets  adminv1connect.BucketServiceClient
	files    adminv1connect.FileServiceClient
	rules    adminv1connect.RuleServiceClient
	webhooks adminv1connect.WebhookServiceClient
	ops      adminv1connect.OpsServiceClient
	server   adminv1connect.ServerServiceClient
}

// clients returns the generated clients over hc, with opts (the protocol).
func (e *env) clients(hc *http.Client, opts ...connect.ClientOption) clients {
	return clients{
		buckets:  adminv1connect.NewBucketServiceClient(hc, e.base, opts...),
		files:    adminv1connect.NewFileServiceClient(hc, e.base, opts...),
		rules:    adminv1connect.NewRuleServiceClient(hc, e.base, opts...),
		webhooks: adminv1connect.NewWebhookServiceClient(hc, e.base, opts...),
		ops:      adminv1connect.NewOpsServiceClient(hc, e.base, opts...),
		server:   adminv1connect.NewServerServiceClient(hc, e.base, opts...),
	}
}

// docsWithRules creates bucket docs and installs testRules, as the admin, and
// returns the admin's clients.
func (e *env) docsWithRules(t *testing.T) clients {
	t.Helper()
	c := e.clients(asAdmin())
	_, err := c.buckets.CreateBucket(ctx(), req(&adminv1.CreateBucketRequest{Id: "docs"}))
	check(t, "CreateBucket", err)
	_, err = c.rules.PutRules(ctx(), req(&adminv1.PutRulesRequest{Document: testRules}))
	check(t, "PutRules", err)
	return c
}

// upload uploads content as name into bucket through /v1 with hc and returns the
// file's id.
func (e *env) upload(hc *http.Client, bucket, name, content string) string {
	e.t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	_ = mw.WriteField("bucket-id", bucket)
	fw, _ := mw.CreateFormFile("file[]", "upload")
	_, _ = io.WriteString(fw, content)
	md, _ := json.Marshal(map[string]string{"name": name})
	_ = mw.WriteField("metadata[]", string(md))
	_ = mw.Close()
	req, _ := http.NewRequest("POST", e.base+"/v1/files", &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	resp, err := hc.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		ProcessedFiles []struct{ ID string } `json:"processedFiles"`
	}
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusCreated || json.Unmarshal(b, &out) != nil || len(out.ProcessedFiles) != 1 {
		e.t.Fatalf("upload %s: %d %s", name, resp.StatusCode, b)
	}
	return out.ProcessedFiles[0].ID
}

// wantCode fails t unless err is a Connect error of code.
func wantCode(t *testing.T, what string, err error, code connect.Code) *connect.Error {
	t.Helper()
	var ce *connect.Error
	if !errors.As(err, &ce) {
		t.Fatalf("%s: error %v, want code %s", what, err, code)
	}
	if ce.Code() != code {
		t.Fatalf("%s: code %s (%s), want %s", what, ce.Code(), ce.Message(), code)
	}
	return ce
}

// check fails t on err.
func check(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// ctx is the tests' context.
func ctx() context.Context { return context.Background() }
