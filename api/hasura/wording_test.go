package hasura_test

import (
	"net/http"
	"testing"
)

// TestAdminSecretWording: the service's refusal of an admin-only call without
// credentials names no face's header; this face rewords it with its own.
func TestAdminSecretWording(t *testing.T) {
	e := newEnv(t)
	for _, c := range []struct{ method, path string }{{"GET", "/v1/buckets"}, {"POST", "/v1/ops/list-orphans"}} {
		msg := mustError(t, e.do(c.method, c.path, nil, false), http.StatusUnauthorized)
		if want := "this action needs the admin secret (x-hasura-admin-secret)"; msg != want {
			t.Errorf("%s %s: %q, want %q", c.method, c.path, msg, want)
		}
	}
}
