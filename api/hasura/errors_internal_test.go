package hasura

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/coffer/coffer"
)

// A refusal by the tenant's quota is the client's error: answered 507 and not logged
// by the face (the service warns, rate-limited); an internal error is logged once.
func TestErrorAnswerLogsNoQuotaRefusal(t *testing.T) {
	var buf bytes.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&buf, nil))) // logger(r) without a Frame's state
	t.Cleanup(func() { slog.SetDefault(old) })
	r := httptest.NewRequest("POST", "/v1/files", nil)
	quota := coffer.Errorf(coffer.EQUOTA, "tenant storage quota exceeded: the change would store 9 of 4 bytes")
	if status, _ := errorAnswer(r, quota); status != http.StatusInsufficientStorage {
		t.Fatalf("status %d, want 507", status)
	}
	if strings.Contains(buf.String(), "quota") {
		t.Fatalf("the face logged a quota refusal:\n%s", buf.String())
	}
	errorAnswer(r, coffer.Errorf(coffer.EINTERNAL, "disk on fire"))
	if !strings.Contains(buf.String(), "level=ERROR") || !strings.Contains(buf.String(), "disk on fire") {
		t.Fatalf("an internal error was not logged:\n%s", buf.String())
	}
}
