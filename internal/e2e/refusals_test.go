package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"connectrpc.com/connect"

	adminv1 "github.com/coffer/coffer/proto/gen/coffer/admin/v1"
	"github.com/coffer/coffer/proto/gen/coffer/admin/v1/adminv1connect"
)

// refusal is one way the tenant router refuses a request, as each protocol shows it.
type refusal struct {
	host   string
	status int          // the HTTP status of /v1, Connect unary and the console
	code   connect.Code // the RPC code
	words  string       // a part of the message
}

// refusalCases are the tenant router's refusals, over the hosts refusalServer serves.
var refusalCases = map[string]refusal{
	"unknown host":     {"nobody.test", http.StatusNotFound, connect.CodeNotFound, "not found"},
	"suspended tenant": {"held.test", http.StatusForbidden, connect.CodePermissionDenied, "suspended"},
	"rate limit":       {"limited.test", http.StatusTooManyRequests, connect.CodeResourceExhausted, "Retry-After"},
}

// refusalServer starts coffer with tenants, h2c and the console on, a suspended
// tenant (held.test) and one whose limit admits one request in 1000 s
// (limited.test, its one request spent).
func refusalServer(t *testing.T) *proc {
	t.Helper()
	p := start(t, append(tenantEnv(), "COFFER_DATA_DIR="+t.TempDir(), "COFFER_H2C=true", "COFFER_CONSOLE=true")...)
	ctx, tc := context.Background(), tenantClient(p)
	for id, limits := range map[string]*adminv1.TenantLimits{"held": nil, "limited": {RequestsPerSecond: 0.001, Burst: 1}} {
		_, err := tc.CreateTenant(ctx, connect.NewRequest(&adminv1.CreateTenantRequest{Id: id, Hosts: []string{id + ".test"},
			Settings: &adminv1.TenantSettings{AdminSecrets: []string{id + "-secret-0123456789"}, Limits: limits}}))
		if err != nil {
			t.Fatal(err)
		}
	}
	if _, err := tc.SuspendTenant(ctx, connect.NewRequest(&adminv1.SuspendTenantRequest{Id: "held"})); err != nil {
		t.Fatal(err)
	}
	if a := hit(t, p, "limited.test", "GET", "/v1/version", nil); a.status != http.StatusOK {
		t.Fatalf("limited tenant's first request: %+v", a)
	}
	return p
}

// hostTransport sends every request to host (the Host header) and keeps the last
// answer's HTTP status.
type hostTransport struct {
	rt     http.RoundTripper
	host   string
	status int
}

func (h *hostTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Host = h.host
	resp, err := h.rt.RoundTrip(r)
	if err == nil {
		h.status = resp.StatusCode
	}
	return resp, err
}

// rpcRefusal calls ServerService.GetVersion on host with opts over rt and returns
// the call's error and the answer's HTTP status.
func rpcRefusal(base, host string, rt http.RoundTripper, opts ...connect.ClientOption) (*connect.Error, int) {
	tr := &hostTransport{rt: rt, host: host}
	c := adminv1connect.NewServerServiceClient(&http.Client{Transport: tr}, base, opts...)
	_, err := c.GetVersion(context.Background(), connect.NewRequest(&adminv1.GetVersionRequest{}))
	var ce *connect.Error
	if !errors.As(err, &ce) {
		ce = connect.NewError(connect.CodeUnknown, err)
	}
	return ce, tr.status
}

// TestRefusalsPerProtocol: the tenant router's refusals (unknown host, suspended
// tenant, rate limit) reach each client in its own protocol's format: hasura JSON on
// /v1, Connect's JSON error (as the console's calls send it too), gRPC over h2c and
// gRPC-Web (an HTTP 200 whose trailers carry the status), plain text for the
// console's page. The 429 keeps its Retry-After.
func TestRefusalsPerProtocol(t *testing.T) {
	p := refusalServer(t)
	base := p.url
	h2c := &http.Transport{Protocols: new(http.Protocols)}
	h2c.Protocols.SetUnencryptedHTTP2(true)
	for name, want := range refusalCases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			resp := sendTo(t, p, want.host, "GET", "/v1/files/x", "")
			var hb struct{ Error struct{ Message string } }
			if resp.status != want.status || json.Unmarshal([]byte(resp.body), &hb) != nil || !strings.Contains(hb.Error.Message, want.words) {
				t.Errorf("/v1: %d %q, want %d with hasura's {\"error\":{\"message\":...}}", resp.status, resp.body, want.status)
			}
			if want.status == http.StatusTooManyRequests && resp.hdr.Get("Retry-After") == "" {
				t.Errorf("/v1: 429 without Retry-After")
			}
			// The console's RPC calls: Connect JSON without Connect-Protocol-Version.
			resp = sendTo(t, p, want.host, "POST", "/coffer.admin.v1.ServerService/GetVersion", "{}", "Content-Type", "application/json")
			var cb struct{ Code, Message string }
			if resp.status != want.status || json.Unmarshal([]byte(resp.body), &cb) != nil || cb.Code != want.code.String() {
				t.Errorf("console's RPC call: %d %q, want %d with {\"code\":%q}", resp.status, resp.body, want.status, want.code)
			}
			resp = sendTo(t, p, want.host, "GET", "/console/", "")
			if resp.status != want.status || !strings.HasPrefix(resp.hdr.Get("Content-Type"), "text/plain") {
				t.Errorf("console page: %d %s %q, want %d in plain text", resp.status, resp.hdr.Get("Content-Type"), resp.body, want.status)
			}
			for _, p := range []struct {
				name   string
				rt     http.RoundTripper
				status int // the answer's HTTP status
				opts   []connect.ClientOption
			}{
				{"connect json", http.DefaultTransport, want.status, []connect.ClientOption{connect.WithProtoJSON()}},
				{"grpc h2c", h2c, http.StatusOK, []connect.ClientOption{connect.WithGRPC()}},
				{"grpc-web", http.DefaultTransport, http.StatusOK, []connect.ClientOption{connect.WithGRPCWeb()}},
			} {
				ce, status := rpcRefusal(base, want.host, p.rt, p.opts...)
				if ce.Code() != want.code || status != p.status || !strings.Contains(ce.Message(), want.words) {
					t.Errorf("%s: HTTP %d, %v, want HTTP %d with %v", p.name, status, ce, p.status, want.code)
				}
				if want.status == http.StatusTooManyRequests && ce.Meta().Get("Retry-After") == "" {
					t.Errorf("%s: 429 without Retry-After", p.name)
				}
			}
		})
	}
}

// reply is an HTTP answer, read.
type reply struct {
	status int
	hdr    http.Header
	body   string
}

// sendTo sends a request with Host host and returns its answer.
func sendTo(t *testing.T, p *proc, host, method, path, body string, hdr ...string) reply {
	t.Helper()
	req, err := http.NewRequest(method, p.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return reply{resp.StatusCode, resp.Header, string(b)}
}
