package sites_test

import (
	"testing"

	"github.com/coffer/coffer/internal/archtest"
)

// TestSitesKnowNoFace: the sites runtime is wired by app and serves every face's
// tenants alike: it depends, even through another package, on no face (package
// api, the router's Face contract, aside), on app, or on the management API's wire
// types.
func TestSitesKnowNoFace(t *testing.T) {
	archtest.DependsOnNone(t, "sites", "github.com/coffer/coffer/app", "github.com/coffer/coffer/api/hasura",
		"github.com/coffer/coffer/rpcapi", "github.com/coffer/coffer/proto/gen",
		"google.golang.org/protobuf/encoding/protojson", "github.com/coffer/coffer/tenancy")
}
