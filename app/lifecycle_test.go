package app

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/tenant"
)

// TestTenantRecreatedStartsEmpty: a tenant whose public file was served (so every
// cache of this node holds it) is deleted; its id cannot be taken again until its
// data is gone; taken again with another host, nothing of the old tenant is
// served on the new host: not its bytes, not its metadata, not its public bucket.
func TestTenantRecreatedStartsEmpty(t *testing.T) {
	c := tenantTestConfig(t)
	m, base := startMain(t, c)
	ctx := context.Background()
	const oldSecret, newSecret = "old-admin-secret-0123", "new-admin-secret-0123"
	const content = "the old customer's bytes"
	addTenant(t, m, "x", "old.test", oldSecret)
	if st, body := do(t, base, "old.test", "PATCH", "/v1/buckets/default", `{"public":true}`, "X-Hasura-Admin-Secret", oldSecret, "Content-Type", "application/json"); st != http.StatusOK {
		t.Fatalf("public bucket: %d %s", st, body)
	}
	id := uploadVia(t, base, "old.test", oldSecret, content)
	for range 2 { // the second one from the caches
		if st, body := do(t, base, "old.test", "GET", "/v1/files/"+id, ""); st != http.StatusOK || body != content {
			t.Fatalf("anonymous download before: %d %q", st, body)
		}
		if st, _ := do(t, base, "old.test", "GET", "/v1/files/"+id+"/metadata", "", "X-Hasura-Admin-Secret", oldSecret); st != http.StatusOK {
			t.Fatalf("metadata before: %d", st)
		}
	}

	admin := m.tenancy.Admin()
	if err := admin.Delete(ctx, "x"); err != nil {
		t.Fatal(err)
	}
	lagging, err := m.tenancy.Registry().GetTenant(ctx, "x") // the row as a node that missed the rest last read it
	if err != nil {
		t.Fatal(err)
	}
	recreate := func() error {
		_, err := admin.Create(ctx, tenant.Input{ID: "x", Hosts: []string{"new.test"},
			Settings: tenant.Settings{AdminSecrets: []string{newSecret}}})
		return err
	}
	if err := recreate(); coffer.ErrorCode(err) != coffer.EPRECONDITION || !strings.Contains(coffer.ErrorMessage(err), "being deleted") {
		t.Errorf("re-creating a tenant being deleted: %v, want EPRECONDITION saying it is being deleted", err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; {
		m.tenancy.PurgeDeleted(ctx)
		if _, err := m.tenancy.Registry().GetTenant(ctx, "x"); coffer.ErrorCode(err) == coffer.ENOTFOUND {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("tenant x not purged within 10 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := recreate(); err != nil {
		t.Fatal(err)
	}

	for _, p := range []struct{ host, method, path string }{
		{"new.test", "GET", "/v1/files/" + id}, {"new.test", "HEAD", "/v1/files/" + id},
		{"new.test", "GET", "/v1/files/" + id + "/metadata"}, {"new.test", "GET", "/v1/files/" + id + "/presignedurl"},
		{"old.test", "GET", "/v1/files/" + id},
	} {
		for _, secret := range []string{"", newSecret, oldSecret} {
			var hdr []string
			if secret != "" {
				hdr = []string{"X-Hasura-Admin-Secret", secret}
			}
			st, body := do(t, base, p.host, p.method, p.path, "", hdr...)
			if st < 400 || strings.Contains(body, content) || strings.Contains(body, id) {
				t.Errorf("%s %s%s with secret %q: %d %q, want a refusal with nothing of the old tenant", p.method, p.host, p.path, secret, st, body)
			}
		}
	}
	st, body := do(t, base, "new.test", "GET", "/v1/buckets/default", "", "X-Hasura-Admin-Secret", newSecret)
	if st != http.StatusOK || !strings.Contains(body, `"public":false`) {
		t.Errorf("the new tenant's default bucket: %d %s, want the new one (not public)", st, body)
	}
	if st, body := do(t, base, "new.test", "GET", "/v1/buckets/default/files", "", "X-Hasura-Admin-Secret", newSecret); st != http.StatusOK || strings.Contains(body, id) {
		t.Errorf("the new tenant's files: %d %s", st, body)
	}

	// A purge step of the old tenant that outlived it (a node whose tenant table is
	// stale) removes nothing of the new one.
	newID := uploadVia(t, base, "new.test", newSecret, "the new customer's bytes")
	for range 3 {
		_ = m.tenancy.PurgeStep(ctx, lagging)
	}
	if st, body := do(t, base, "new.test", "GET", "/v1/files/"+newID, "", "X-Hasura-Admin-Secret", newSecret); st != http.StatusOK || body != "the new customer's bytes" {
		t.Errorf("the new tenant's file after a stale purge step: %d %q", st, body)
	}
	if _, err := m.tenancy.Registry().GetTenant(ctx, "x"); err != nil {
		t.Errorf("the new tenant after a stale purge step: %v", err)
	}
}
