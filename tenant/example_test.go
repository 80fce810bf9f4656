package tenant_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/netip"
	"time"

	"github.com/coffer/coffer/tenant"
)

// A resolver over two tenants and the default tenant's old hostname, with a
// capturing wildcard and the path prefix.
func ExampleResolver() {
	r, err := tenant.NewResolver([]tenant.Entry{
		{ID: "", Hosts: []string{"files.example.com"}},
		{ID: "acme", Hosts: []string{"files.acme.com"}},
		{ID: "bob"},
	}, tenant.Options{Wildcards: []string{"*.files.example.com"}, PathPrefix: true})
	if err != nil {
		panic(err)
	}
	peer := netip.MustParseAddr("192.0.2.7")
	for _, req := range [][2]string{
		{"FILES.ACME.COM:443", "/v1/files/1"},
		{"bob.files.example.com", "/v1/files/1"},
		{"files.example.com", "/t/bob/v1/files/1"},
		{"files.example.com", "/v1/files/1"},
		{"eve.files.example.com", "/v1/files/1"},
	} {
		res, err := r.Resolve(req[0], "", peer, req[1])
		if err != nil {
			fmt.Printf("%s → %v\n", req[0], err)
			continue
		}
		fmt.Printf("%s → tenant %q, path %s\n", req[0], res.TenantID, res.Path(req[1]))
	}
	// Output:
	// FILES.ACME.COM:443 → tenant "acme", path /v1/files/1
	// bob.files.example.com → tenant "bob", path /v1/files/1
	// files.example.com → tenant "bob", path /v1/files/1
	// files.example.com → tenant "", path /v1/files/1
	// eve.files.example.com → not_found: not found
}

// Settings as written, prepared for storage, then checked and shown.
func ExampleSettings() {
	sealer, _ := tenant.NewSealer(bytes.Repeat([]byte{7}, tenant.SealKeySize))
	s, err := tenant.Parse([]byte(`{"adminSecrets": ["a-long-admin-secret"],
		"presignKey": "0123456789abcdef0123456789abcdef", "limits": {"requestsPerSecond": 50}}`))
	if err != nil {
		panic(err)
	}
	if err := s.Prepare(sealer, "acme"); err != nil {
		panic(err)
	}
	key, _ := s.OpenPresignKey(sealer, "acme")
	fmt.Println(s.CheckAdminSecret("a-long-admin-secret"), s.CheckAdminSecret("guess"), key)
	shown, _ := json.Marshal(s.Redacted())
	fmt.Println(string(shown))
	// Output:
	// true false 0123456789abcdef0123456789abcdef
	// {"adminSecrets":{"set":true,"count":1},"presignKey":{"set":true},"storage":{"kind":"shared","secretAccessKey":{"set":false}},"limits":{"requestsPerSecond":50}}
}

// A tenant limited to 2 requests a second: the third at once is refused, with
// the headers a 429 carries.
func ExampleRateLimiter() {
	l := tenant.NewRateLimiter(tenant.Limits{RequestsPerSecond: 2}, tenant.DefaultUserTableConfig())
	now := time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)
	for range 3 {
		d := l.Allow(now, "user-1")
		h := http.Header{}
		tenant.SetHeaders(h, d)
		fmt.Println(d.OK, h)
	}
	// Output:
	// true map[Ratelimit-Limit:[2] Ratelimit-Remaining:[1] Ratelimit-Reset:[1]]
	// true map[Ratelimit-Limit:[2] Ratelimit-Remaining:[0] Ratelimit-Reset:[1]]
	// false map[Ratelimit-Limit:[2] Ratelimit-Remaining:[0] Ratelimit-Reset:[1] Retry-After:[1]]
}
