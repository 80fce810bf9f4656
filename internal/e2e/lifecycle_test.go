package e2e

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"

	adminv1 "github.com/coffer/coffer/proto/gen/coffer/admin/v1"
)

// TestTenantRecreated: tenant "reborn" keeps a public file, which node B serves (so
// B's caches hold it); node A deletes the tenant, refuses its id until the purge is
// over, then creates it again with another host and admin secret. Afterwards
// neither node serves anything of the old tenant, on the new host, the old one or
// the path prefix, to anonymous clients, the new admin or the old one: not its
// bytes, not its metadata, not its public bucket. On SQLite, A and B are one node;
// on PostgreSQL and S3, two.
func TestTenantRecreated(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		p := start(t, append(tenantEnv(), "COFFER_DATA_DIR="+t.TempDir())...)
		recreateTenant(t, p, p)
	})
	t.Run("postgres-two-nodes", func(t *testing.T) {
		env := append(scaleEnv(t), tenantEnv()...) // one tenant key for both nodes
		recreateTenant(t, start(t, append(env, "COFFER_DATA_DIR="+t.TempDir())...), start(t, append(env, "COFFER_DATA_DIR="+t.TempDir())...))
	})
}

// recreateTenant runs TestTenantRecreated's scenario with nodes a and b.
func recreateTenant(t *testing.T, a, b *proc) {
	ctx := context.Background()
	const oldSecret, newSecret = "reborn-old-secret-0123", "reborn-new-secret-0123"
	const content = "the old customer's bytes, served by node B"
	create := func(host, secret string) error {
		_, err := tenantClient(a).CreateTenant(ctx, connect.NewRequest(&adminv1.CreateTenantRequest{
			Id: "reborn", Hosts: []string{host}, Settings: &adminv1.TenantSettings{AdminSecrets: []string{secret}}}))
		return err
	}
	if err := create("old.reborn.test", oldSecret); err != nil {
		t.Fatal(err)
	}
	if r := hit(t, a, "old.reborn.test", "PATCH", "/v1/buckets/default", []byte(`{"public":true}`),
		"X-Hasura-Admin-Secret", oldSecret, "Content-Type", "application/json"); r.status != http.StatusOK {
		t.Fatalf("public bucket: %+v", r)
	}
	id := uploadAs(t, a, "old.reborn.test", "default", "old.txt", content, "X-Hasura-Admin-Secret", oldSecret)
	for range 2 { // the second from B's caches
		if r := hit(t, b, "old.reborn.test", "GET", "/v1/files/"+id, nil); r.status != http.StatusOK || r.body != content {
			t.Fatalf("node B before: %+v", r)
		}
		if r := hit(t, b, "old.reborn.test", "GET", "/v1/files/"+id+"/metadata", nil, "X-Hasura-Admin-Secret", oldSecret); r.status != http.StatusOK {
			t.Fatalf("node B's metadata before: %+v", r)
		}
	}

	if _, err := tenantClient(a).DeleteTenant(ctx, connect.NewRequest(&adminv1.DeleteTenantRequest{Id: "reborn"})); err != nil {
		t.Fatal(err)
	}
	// Refused while the purge runs; on two nodes, B may hear the delete and finish the
	// purge (one file) before A's next call, and then the id is free at once.
	err := create("new.reborn.test", newSecret)
	if err != nil && (connect.CodeOf(err) != connect.CodeFailedPrecondition || !strings.Contains(err.Error(), "being deleted")) {
		t.Errorf("re-creating a tenant being deleted: %v, want FailedPrecondition saying it is being deleted", err)
	}
	for deadline := time.Now().Add(20 * time.Second); err != nil; time.Sleep(100 * time.Millisecond) {
		_, gone := tenantClient(a).GetTenant(ctx, connect.NewRequest(&adminv1.GetTenantRequest{Id: "reborn"}))
		if connect.CodeOf(gone) == connect.CodeNotFound {
			if err = create("new.reborn.test", newSecret); err != nil {
				t.Fatal(err)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("tenant reborn not purged within 20 s: %v", gone)
		}
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if hit(t, b, "new.reborn.test", "GET", "/v1/buckets/default", nil, "X-Hasura-Admin-Secret", newSecret).status == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("node B does not serve the new tenant within 5 s")
		}
	}
	tried := 0
	nodes := []*proc{b, a}
	if a == b {
		nodes = nodes[:1]
	}
	for _, node := range nodes {
		for _, at := range []struct{ host, prefix string }{{"new.reborn.test", ""}, {"old.reborn.test", ""}, {"default.test", "/t/reborn"}} {
			for _, route := range []string{"GET /v1/files/" + id, "HEAD /v1/files/" + id, "GET /v1/files/" + id + "/metadata",
				"GET /v1/files/" + id + "/presignedurl", "GET /v1/buckets/default/files"} {
				for _, secret := range []string{"", newSecret, oldSecret} {
					method, path, _ := strings.Cut(route, " ")
					var hdr []string
					if secret != "" {
						hdr = []string{"X-Hasura-Admin-Secret", secret}
					}
					r := hit(t, node, at.host, method, at.prefix+path, nil, hdr...)
					tried++
					old := strings.Contains(r.body, content) || strings.Contains(r.body, id) || strings.Contains(r.body, "old.txt")
					if old || r.status < 400 && !strings.HasSuffix(path, "/files") {
						t.Errorf("node %s: %s %s%s with secret %q: %d %q: the old tenant's", node.url, method, at.host, at.prefix+path, secret, r.status, r.body)
					}
				}
			}
		}
		if r := hit(t, node, "new.reborn.test", "GET", "/v1/buckets/default", nil, "X-Hasura-Admin-Secret", newSecret); r.status != http.StatusOK || !strings.Contains(r.body, `"public":false`) {
			t.Errorf("node %s: the new tenant's default bucket: %+v, want the new one (not public)", node.url, r)
		}
	}
	t.Logf("%d probes of the old tenant's file after its id was taken again", tried)
}
