package service_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/service"
)

// TestAdminRefusalNamesNoFace: an admin-only use case refuses a caller without
// credentials with EUNAUTHORIZED whose cause is service.ErrAdminRequired (for a face
// to reword) and whose message names no face's header.
func TestAdminRefusalNamesNoFace(t *testing.T) {
	svc, _, _ := newService(t, ownerRules)
	_, err := svc.Rules(&coffer.Principal{Anonymous: true})
	if coffer.ErrorCode(err) != coffer.EUNAUTHORIZED || !errors.Is(err, service.ErrAdminRequired) {
		t.Fatalf("anonymous rules read: %v, want EUNAUTHORIZED caused by ErrAdminRequired", err)
	}
	if msg := strings.ToLower(coffer.ErrorMessage(err)); strings.Contains(msg, "hasura") || strings.Contains(msg, "x-") {
		t.Errorf("the message names a face's header: %q", msg)
	}
	if err := service.RequireAdmin(coffer.AdminPrincipal()); err != nil {
		t.Errorf("admin refused: %v", err)
	}
}
