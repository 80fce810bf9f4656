package webhook_test

import (
	"testing"

	"github.com/coffer/coffer/internal/archtest"
)

// TestWebhookDependsOnOutboxOnly: the dispatcher and the guard need the domain and
// the metadata store's Outbox contract only (doc.go): no face, no service, no store
// driver, cache or metrics, so that any outbound caller can use the guard.
func TestWebhookDependsOnOutboxOnly(t *testing.T) {
	archtest.DependsOnlyOn(t, "webhook", "github.com/coffer/coffer", "github.com/coffer/coffer/meta",
		"github.com/coffer/coffer/webhook/...", "github.com/google/uuid", "golang.org/x/text/...")
}
