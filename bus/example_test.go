package bus_test

import (
	"fmt"

	"github.com/coffer/coffer/bus"
)

// A listener decodes what arrives; a publisher encodes what it sends.
func ExampleDecode() {
	for _, p := range []string{"f:acme/0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b", "r", "s:acme", `p:{"t":"acme","s":"www","p":{"paths":["/index.html"]}}`} {
		e, err := bus.Decode(p)
		fmt.Printf("%v %q %q %v %v\n", e.Kind, e.Tenant, e.ID, e.Purge.Paths, err)
	}
	p, _ := bus.Encode(bus.Event{Kind: bus.TenantGone, Tenant: "acme"})
	fmt.Println(p, bus.Kind(200))
	// Output:
	// FileChanged "acme" "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b" [] <nil>
	// RulesChanged "" "" [] <nil>
	// SitesChanged "acme" "" [] <nil>
	// SitePurged "acme" "www" [/index.html] <nil>
	// g:acme Kind(200)
}
