package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"connectrpc.com/grpcreflect"

	adminv1 "github.com/coffer/coffer/proto/gen/coffer/admin/v1"
	"github.com/coffer/coffer/proto/gen/coffer/admin/v1/adminv1connect"
)

// admin runs `coffer admin args...` against p (the built binary, JSON output) and
// returns its stdout, stderr and exit status.
func (p *proc) admin(args ...string) (string, string, int) {
	p.t.Helper()
	cmd := exec.Command(binary, append([]string{"admin", "--output", "json"}, args...)...)
	cmd.Env = append(os.Environ(), "COFFER_SERVER="+p.url, "COFFER_ADMIN_SECRET="+adminSecret)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		p.t.Fatalf("coffer admin %v: %v", args, err)
	}
	return out.String(), errb.String(), code
}

// mustAdmin runs `coffer admin args...`, fails unless it exits 0, and decodes its
// JSON output into v (if non-nil).
func (p *proc) mustAdmin(v any, args ...string) {
	p.t.Helper()
	out, errOut, code := p.admin(args...)
	if code != 0 {
		p.t.Fatalf("coffer admin %v: exit %d: %s", args, code, errOut)
	}
	if v != nil {
		if err := json.Unmarshal([]byte(out), v); err != nil {
			p.t.Fatalf("coffer admin %v: %v in %s", args, err, out)
		}
	}
}

// TestAdminCLI: with the built binary, a bucket, rules and a webhook are made,
// listed and deleted; a rules file with a mistake gives the path-named error on one
// line and exit status 1, and changes nothing; no credentials is exit 1 too, and so
// is `tenants list` on a server without multi-tenancy, saying so.
func TestAdminCLI(t *testing.T) {
	p := start(t, "COFFER_DATA_DIR="+t.TempDir(), "COFFER_WEBHOOK_ALLOW_NETWORKS=127.0.0.0/8")
	var b struct{ ID string }
	p.mustAdmin(&b, "buckets", "create", "photos", "--public", "--allowed-mime-types", "image/*", "--max-size", "1000000")
	var list struct{ Buckets []struct{ ID string } }
	p.mustAdmin(&list, "buckets", "list")
	if b.ID != "photos" || len(list.Buckets) != 2 {
		t.Fatalf("created %+v, listed %+v", b, list)
	}

	dir := t.TempDir()
	good, bad := filepath.Join(dir, "rules.yaml"), filepath.Join(dir, "bad.yaml")
	_ = os.WriteFile(good, []byte("rules:\n  - role: user\n    buckets: [photos]\n    read: {}\n"), 0o644)
	_ = os.WriteFile(bad, []byte("rules:\n  - role: user\n    buckets: [photos]\n    raed: {}\n"), 0o644)
	p.mustAdmin(nil, "rules", "validate", good)
	p.mustAdmin(nil, "rules", "put", good)
	var rules struct{ Document string }
	p.mustAdmin(&rules, "rules", "get")
	out, errOut, code := p.admin("rules", "validate", bad)
	if code != 1 || out != "" || !strings.Contains(errOut, "rules[0]") || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
		t.Fatalf("rules validate with a mistake: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	_, errOut, code = p.admin("rules", "put", bad)
	var after struct{ Document string }
	p.mustAdmin(&after, "rules", "get")
	if code != 1 || !strings.Contains(errOut, "rules[0]") || after.Document != rules.Document || !strings.Contains(rules.Document, "photos") {
		t.Fatalf("rules put with a mistake: exit %d, stderr %q; rules %s then %s", code, errOut, rules.Document, after.Document)
	}

	var hook struct{ Webhook struct{ ID, Secret string } }
	p.mustAdmin(&hook, "webhooks", "create", "--url", "http://127.0.0.1:9/hook", "--bucket", "photos", "--events", "file.created")
	var hooks struct{ Webhooks []struct{ ID string } }
	p.mustAdmin(&hooks, "webhooks", "list")
	if hook.Webhook.ID == "" || hook.Webhook.Secret == "" || len(hooks.Webhooks) != 1 || hooks.Webhooks[0].ID != hook.Webhook.ID {
		t.Fatalf("webhook %+v, listed %+v", hook, hooks)
	}
	p.mustAdmin(nil, "webhooks", "deliveries", hook.Webhook.ID, "--state", "dead")
	p.mustAdmin(nil, "webhooks", "delete", hook.Webhook.ID)
	p.mustAdmin(nil, "buckets", "delete", "photos")
	p.mustAdmin(&hooks, "webhooks", "list")
	p.mustAdmin(&list, "buckets", "list")
	if len(hooks.Webhooks) != 0 || len(list.Buckets) != 1 {
		t.Fatalf("after deleting: webhooks %+v, buckets %+v", hooks, list)
	}

	cmd := exec.Command(binary, "admin", "buckets", "list", "--server", p.url)
	cmd.Env = append(os.Environ(), "COFFER_ADMIN_SECRET=")
	errb := &bytes.Buffer{}
	cmd.Stderr = errb
	if err := cmd.Run(); err == nil || !strings.Contains(errb.String(), "unauthenticated") {
		t.Fatalf("without credentials: %v, %q", err, errb.String())
	}
	_, errOut, code = p.admin("tenants", "list", "--platform-secret", "p")
	if code != 1 || !strings.Contains(errOut, "failed_precondition: multi-tenancy is off") {
		t.Fatalf("tenants list on a server without tenants: exit %d, %q", code, errOut)
	}
}

// TestRPCOverH2C: against the built binary with --h2c, gRPC server reflection over
// HTTP/2 without TLS lists the contract's services (what `grpcurl -plaintext ADDR
// list` asks; grpcurl is not built by the test command), and one call each over gRPC,
// gRPC-Web and the Connect protocol's JSON (docs/management.md's curl) succeeds.
func TestRPCOverH2C(t *testing.T) {
	p := start(t, "COFFER_DATA_DIR="+t.TempDir(), "COFFER_H2C=true")
	tr := &http.Transport{Protocols: new(http.Protocols)}
	tr.Protocols.SetUnencryptedHTTP2(true)
	h2c := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	stream := grpcreflect.NewClient(h2c, p.url, connect.WithGRPC()).NewStream(context.Background())
	names, err := stream.ListServices()
	if err != nil {
		t.Fatal(err)
	}
	_, _ = stream.Close()
	got := fmt.Sprint(names)
	for _, want := range []string{"coffer.admin.v1.BucketService", "coffer.admin.v1.RuleService", "coffer.admin.v1.TenantService", "grpc.health.v1.Health",
		"grpc.reflection.v1.ServerReflection"} {
		if !strings.Contains(got, want) {
			t.Errorf("reflection lists %s, without %s", got, want)
		}
	}
	hdr := connect.WithInterceptors(connect.UnaryInterceptorFunc(func(next connect.UnaryFunc) connect.UnaryFunc {
		return func(ctx context.Context, r connect.AnyRequest) (connect.AnyResponse, error) {
			r.Header().Set("X-Hasura-Admin-Secret", adminSecret)
			return next(ctx, r)
		}
	}))
	for name, c := range map[string]adminv1connect.BucketServiceClient{
		"grpc":     adminv1connect.NewBucketServiceClient(h2c, p.url, connect.WithGRPC(), hdr),
		"grpc-web": adminv1connect.NewBucketServiceClient(http.DefaultClient, p.url, connect.WithGRPCWeb(), hdr),
		"connect":  adminv1connect.NewBucketServiceClient(http.DefaultClient, p.url, connect.WithProtoJSON(), hdr),
	} {
		res, err := c.GetBucket(context.Background(), connect.NewRequest(&adminv1.GetBucketRequest{Id: "default"}))
		if err != nil || res.Msg.GetBucket().GetId() != "default" {
			t.Errorf("%s GetBucket: %v %v", name, res, err)
		}
	}
}
