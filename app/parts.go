package app

import (
	"github.com/coffer/coffer/auth"
	"github.com/coffer/coffer/imaging"
	"github.com/coffer/coffer/webhook"
)

// Parts are components New otherwise builds from Config, and settings no flag
// reaches: tests (and programs embedding coffer) supply them here, and everything
// else is wired as `coffer serve` wires it. The zero value builds everything.
type Parts struct {
	// Images is the image engine, which the caller closes; nil: the coffer-imager
	// worker if it is found, else transformations answer 501.
	Images imaging.Engine
	// Resolver resolves the hosts of webhook targets; nil: the system resolver.
	Resolver webhook.Resolver
	// Signer signs and checks presigned URLs; nil: the one Config's keys give.
	Signer *auth.Signer
	// Webhooks, if set, adjusts the dispatcher's settings (backoff, polling) after
	// Config's are applied.
	Webhooks func(*webhook.Config)
	// HTTP, if set, adjusts the API's settings (deadlines) after Config's are applied.
	HTTP HTTPOption
}
