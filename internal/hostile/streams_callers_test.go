package hostile

import (
	"bytes"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/coffer/coffer/internal/streamtest"
)

// The callers of the streams category (streams_test.go): on a proxy's connection
// every tenant's admin is "admin" with no user id, and a tenant's token issuer can
// mint any number of user ids; anonymous clients can open any number of
// connections, and a call of a method that needs credentials must not have its
// message decoded before it is refused.

// getVersion is a unary method open to anyone, whose empty request costs nothing.
const getVersion = "/coffer.admin.v1.ServerService/GetVersion"

// emptyFrame is an empty message, uncompressed.
var emptyFrame = []byte{0, 0, 0, 0, 0}

// served reports whether GetVersion is answered on hc to host with hdr.
func (s *server) served(hc *http.Client, host string, hdr ...string) bool {
	res := streamtest.Send(hc, s.url+getVersion, emptyFrame, 1, false, append([]string{"Host", host}, hdr...)...)
	return res.Code == "0" && res.Answers == 1
}

// exhaust sends 16 KiB bomb streams on hc to host with hdr until the connection
// refuses them, and returns how many it sent (41: never refused).
func (s *server) exhaust(hc *http.Client, host string, hdr ...string) int {
	bomb := streamtest.BombFrame(16<<10 - 64)
	for i := 1; i <= 40; i++ { // each decodes 1 MiB: 32 of them are a caller's budget
		res := streamtest.Send(hc, s.url+streamPaths[0], bomb, 4096, false, append([]string{"Host", host}, hdr...)...)
		if strings.Contains(res.Msg, "connection") {
			return i
		}
	}
	return 41
}

// tenantAdminsApart: on one connection, tenant a's admin spends its budget; tenant
// b's admin (the same role and empty user id, of another tenant) is served.
func (ts *tenantServer) tenantAdminsApart(tl *tally) {
	hc := ts.h2cFrom("127.0.0.14")
	n := ts.exhaust(hc, ts.a.host, ts.a.admin()...)
	a, b := ts.served(hc, ts.a.host, ts.a.admin()...), ts.served(hc, ts.b.host, ts.b.admin()...)
	ts.t.Logf("tenant a's admin refused after %d streams; then a's admin served: %v, b's admin served: %v", n, a, b)
	wrong := ""
	switch {
	case n > 40 || a:
		wrong = "tenant a's admin was never refused"
	case !b:
		wrong = "tenant b's admin was refused on the connection after tenant a's admin spent its budget"
	}
	tl.probe("two tenants' admins on one connection", answer{status: http.StatusOK}, wrong)
}

// manyPrincipals: on one connection, users of tenant a served before and after 64
// others came are served still after two more spent their whole budgets.
func (ts *tenantServer) manyPrincipals(tl *tally) {
	hc, host := ts.h2cFrom("127.0.0.15"), ts.a.host
	wrong := ""
	if !ts.served(hc, host, ts.a.user("early")...) {
		wrong = "the first user was refused"
	}
	for i := range 64 {
		ts.served(hc, host, ts.a.user("filler"+strconv.Itoa(i))...)
	}
	if !ts.served(hc, host, ts.a.user("late")...) && wrong == "" {
		wrong = "a user arriving after 65 was refused"
	}
	for i := range 2 {
		ts.exhaust(hc, host, ts.a.user("flood"+strconv.Itoa(i))...)
	}
	for _, who := range []string{"early", "late"} {
		if !ts.served(hc, host, ts.a.user(who)...) && wrong == "" {
			wrong = who + ": refused after 67 other users came on the connection, 2 of them spending their budgets"
		}
	}
	tl.probe("69 principals of one tenant on one connection", answer{status: http.StatusOK}, wrong)
}

// credentialed are methods that need credentials, one of each service.
var credentialed = []string{
	"BucketService/ListBuckets", "RuleService/PutRules", "WebhookService/CreateWebhook", "OpsService/Sweep",
	"ServerService/GetCacheStats", "TenantService/CreateTenant", "SiteService/CreateSite", "AuditService/QueryAudit",
}

// anonymousNotDecoded: anonymous unary calls of 2 MiB that are no message (field
// 31, wire type 7), to methods that need credentials, are refused UNAUTHENTICATED
// (PERMISSION_DENIED for TenantService on a tenant's host) before they are decoded:
// decoding would answer INVALID_ARGUMENT; and 50 gzip bombs of 2 MiB cost little.
func (ts *tenantServer) anonymousNotDecoded(tl *tally) {
	junk := streamtest.Frame(bytes.Repeat([]byte{0xff}, 2<<20-64))
	for _, host := range []string{defaultHost, ts.a.host} {
		for _, m := range credentialed {
			res := streamtest.Send(ts.h2cFrom("127.0.0.16"), ts.url+"/coffer.admin.v1."+m, junk, 1, false, "Host", host)
			wrong := ""
			if res.Code != "16" && res.Code != "7" {
				wrong = fmt.Sprintf("status %s: decoded before it was refused", res.Code)
			}
			tl.probe(fmt.Sprintf("%s: anonymous %s, 2 MiB that is no message", host, m), streamAnswer(res), wrong)
		}
	}
	bomb := streamtest.BombFrame(2<<20 - 64)
	cpu := ts.cpuSeconds()
	for i := range 50 {
		streamtest.Send(ts.h2cFrom("127.0.0.16"), ts.url+"/coffer.admin.v1."+credentialed[i%len(credentialed)], bomb, 1, false, "Host", ts.a.host)
	}
	used := ts.cpuSeconds() - cpu
	ts.t.Logf("50 anonymous 2 MiB gzip bombs to methods that need credentials: %.2f s of CPU", used)
	wrong := ""
	if used > streamCPU {
		wrong = fmt.Sprintf("cost %.2f s of CPU: decoded", used)
	}
	tl.probe("50 anonymous gzip bombs to methods that need credentials", answer{status: http.StatusOK}, wrong)
}

// addressBudget: anonymous reflection bomb streams over 20 connections from one
// address, to both tenants' hosts, are refused once the address has had about one
// connection's budget decoded, and cost little; another address is served.
func (ts *tenantServer) addressBudget(tl *tally) {
	conns := make([]*http.Client, 20)
	for i := range conns {
		conns[i] = ts.h2cFrom("127.0.0.17")
	}
	bomb, hosts := streamtest.BombFrame(16<<10-64), []string{defaultHost, ts.a.host, ts.b.host}
	cpu, streams, refused := ts.cpuSeconds(), 0, 0
	for round := 0; round < 40 && refused < len(conns); round++ {
		refused = 0
		for i, hc := range conns {
			res := streamtest.Send(hc, ts.url+streamPaths[0], bomb, 4096, false, "Host", hosts[i%len(hosts)])
			streams++
			if res.ResourceExhausted() && strings.Contains(res.Msg, "address") {
				refused++
			}
		}
	}
	used := ts.cpuSeconds() - cpu
	ts.t.Logf("20 connections from one address: %d streams, all refused: %v, %.2f s of CPU", streams, refused == len(conns), used)
	wrong := ""
	switch {
	case refused < len(conns) || streams > 100:
		wrong = fmt.Sprintf("%d streams, %d of 20 connections refused by the address's budget at the end", streams, refused)
	case used > 1:
		wrong = fmt.Sprintf("cost %.2f s of CPU", used)
	case !ts.served(ts.h2cFrom("127.0.0.18"), ts.a.host):
		wrong = "an anonymous caller of another address was refused"
	}
	tl.probe("anonymous streams on 20 connections from one address", answer{status: http.StatusOK}, wrong)
}
